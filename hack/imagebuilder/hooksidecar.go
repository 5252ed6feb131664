package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Hook sidecar images (KubeVirt's hooks.kubevirt.io/hookSidecars):
//   - sidecar-shim: the shim (cmd/sidecar-shim), busybox and a /tmp, so a ConfigMap's shell
//     script mounted at /usr/bin/onDefineDomain runs, mktemp and all, as in KubeVirt's guide.
//   - example-hook-sidecar: the shim with test/images/smbios-hook as its onDefineDomain
//     (KubeVirt's example-hook-sidecar: the base board manufacturer from an annotation).
func init() {
	register("sidecar-shim", func(b *Builder) (v1.Image, error) { return b.sidecarShimImage() })
	register("example-hook-sidecar", func(b *Builder) (v1.Image, error) { return b.exampleHookImage() })
}

const shimPath = "/usr/bin/sidecar-shim"

func (b *Builder) sidecarShimImage() (v1.Image, error) {
	shim, err := fileFromDisk(filepath.Join(b.Root, "_out", "bin", "sidecar-shim"), shimPath, 0o755)
	if err != nil {
		return nil, fmt.Errorf("%w (run make build first)", err)
	}
	box, err := b.busybox()
	if err != nil {
		return nil, err
	}
	// The sidecar runs as a user who could not create /tmp; sticky and open to all, as usual.
	tmp := File{Path: "/tmp", Mode: 0o1777, Dir: true}
	return hookImage(append(box, shim, tmp))
}

func (b *Builder) exampleHookImage() (v1.Image, error) {
	shim, err := fileFromDisk(filepath.Join(b.Root, "_out", "bin", "sidecar-shim"), shimPath, 0o755)
	if err != nil {
		return nil, fmt.Errorf("%w (run make build first)", err)
	}
	out := filepath.Join(b.Root, "_out", "bin", "smbios-hook")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./test/images/smbios-hook")
	cmd.Dir = b.Root
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build smbios-hook: %w: %s", err, msg)
	}
	hook, err := fileFromDisk(out, "/usr/bin/onDefineDomain", 0o755)
	if err != nil {
		return nil, err
	}
	return hookImage([]File{shim, hook})
}

// hookImage is files on an empty base, the shim their entrypoint.
func hookImage(files []File) (v1.Image, error) {
	return filesImage(files, v1.Config{Entrypoint: []string{shimPath}, User: nonRoot})
}

// busybox is Debian's static busybox at /bin/busybox with a link in /bin for each applet.
func (b *Builder) busybox() ([]File, error) {
	trees, err := b.debTrees(hostApt, guestBusyboxPkg)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(trees[0], "bin", "busybox")
	bin, err := fileFromDisk(local, "/bin/busybox", 0o755)
	if err != nil {
		return nil, err
	}
	list, err := exec.Command(local, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %w", err)
	}
	files := []File{bin}
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			files = append(files, File{Path: "/bin/" + applet, Link: "busybox"})
		}
	}
	return files, nil
}
