package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/vmctl/vmctl/launcher/layout"
)

// launcherSocketDir is where the launcher image's libvirtd puts libvirt-sock (libvirtd.conf
// unix_sock_dir): the pod's private emptyDir, which virt-handler reaches on the node.
// /var/run is a symlink to /run in the image; a volume mounted at either path works.
// The build fails if the shipped libvirtd.conf disagrees with launcher/layout.
var launcherSocketDir = path.Dir(layout.InPod(layout.SocketRel))

// The pod's user (launcher/layout.LauncherUID), named "qemu" as in KubeVirt's launcher:
// libvirt looks its uid up by name and home directory.
var (
	qemuGroup = fmt.Sprintf("qemu:x:%d:", layout.LauncherGID)
	qemuUser  = fmt.Sprintf("qemu:x:%d:%d:qemu:%s:/usr/sbin/nologin", layout.LauncherUID, layout.LauncherGID, layout.LibvirtHome)
)

// launcherBaseMustHave are files without which the base is not a launcher base: a broken or
// stale cache entry fails the build here rather than in a pod.
var launcherBaseMustHave = []string{
	"usr/bin/qemu-system-x86_64",
	"usr/sbin/libvirtd",
	"usr/bin/virsh",
	"usr/bin/tini",
	"usr/sbin/ip",
	strings.TrimPrefix(layout.OVMFCode, "/"),
	strings.TrimPrefix(layout.OVMFSecureCode, "/"),
}

func init() {
	register("virt-launcher", func(b *Builder) (v1.Image, error) { return b.launcherImage() })
}

// launcherImage is three layers: the cached Debian base with QEMU and libvirt, libvirt's
// configuration for an unprivileged pod, and the virt-launcher binary. The layers change in
// that order of rarity, so a rebuilt binary only replaces the last, small one.
func (b *Builder) launcherImage() (v1.Image, error) {
	bin := filepath.Join(b.Root, "_out", "bin", "virt-launcher")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w (run make build first)", err)
	}
	base, basePath, err := b.launcherBaseLayer()
	if err != nil {
		return nil, err
	}
	config, err := b.launcherConfigLayer(basePath)
	if err != nil {
		return nil, err
	}
	f, err := fileFromDisk(bin, "/usr/bin/virt-launcher", 0o755)
	if err != nil {
		return nil, err
	}
	binary, err := layerFromFiles([]File{f})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, base, config, binary)
	if err != nil {
		return nil, err
	}
	return withConfig(img, launcherConfig)
}

// launcherConfig runs virt-launcher under tini, which forwards signals and reaps what the
// launcher (itself a subreaper, for QEMU) does not; -s because the pod shares one process
// namespace, whose PID 1 is the pause container. It runs as the unprivileged pod user, and the
// environment names the session libvirtd, so `kubectl exec <pod> -- virsh list` reaches it.
var launcherConfig = v1.Config{
	Entrypoint: []string{"/usr/bin/tini", "-s", "--", "/usr/bin/virt-launcher"},
	User:       fmt.Sprintf("%d:%d", layout.LauncherUID, layout.LauncherGID),
	Env:        append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, layout.LibvirtEnv()...),
}

// launcherConfigFiles are libvirt's configuration files, from hack/images/launcher to
// /etc/libvirt.
var launcherConfigFiles = []string{"qemu.conf", "libvirtd.conf"}

// launcherConfigLayer holds /etc/libvirt's configuration and /etc/passwd and /etc/group with
// the qemu user and group added. passwd and group are whole files (a layer replaces files, it
// cannot append to them), so they are the base's own plus the missing lines.
func (b *Builder) launcherConfigLayer(basePath string) (v1.Layer, error) {
	dir := filepath.Join(b.Root, launcherImageDir)
	var files []File
	for _, name := range launcherConfigFiles {
		f, err := fileFromDisk(filepath.Join(dir, name), "/etc/libvirt/"+name, 0o644)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if err := checkSocketDir(files); err != nil {
		return nil, err
	}

	base, err := readFromTarGz(basePath, append([]string{"etc/passwd", "etc/group"}, launcherBaseMustHave...))
	if err != nil {
		return nil, fmt.Errorf("read launcher base %s: %w", basePath, err)
	}
	for _, p := range launcherBaseMustHave {
		if _, ok := base[p]; !ok {
			return nil, fmt.Errorf("launcher base %s has no /%s: delete it so it is rebuilt", basePath, p)
		}
	}
	if len(base["etc/passwd"]) == 0 || len(base["etc/group"]) == 0 {
		return nil, fmt.Errorf("launcher base %s has no regular /etc/passwd and /etc/group", basePath)
	}
	files = append(files,
		File{Path: "/etc/passwd", Mode: 0o644, Data: withAccount(base["etc/passwd"], qemuUser)},
		File{Path: "/etc/group", Mode: 0o644, Data: withAccount(base["etc/group"], qemuGroup)},
	)
	return layerFromFiles(files)
}

// checkSocketDir makes sure the shipped configuration puts the socket at launcherSocketDir.
func checkSocketDir(files []File) error {
	want := map[string]string{
		"/etc/libvirt/libvirtd.conf": fmt.Sprintf("unix_sock_dir = %q", launcherSocketDir),
	}
	for _, f := range files {
		if w, ok := want[f.Path]; ok && !bytes.Contains(f.Data, []byte(w)) {
			return fmt.Errorf("%s does not contain %s: keep it in step with launcherSocketDir", filepath.Base(f.Path), w)
		}
	}
	return nil
}

// withAccount appends an /etc/passwd or /etc/group line unless an entry of that name exists.
func withAccount(file []byte, line string) []byte {
	name := line[:strings.IndexByte(line, ':')+1]
	for _, l := range strings.Split(string(file), "\n") {
		if strings.HasPrefix(l, name) {
			return file
		}
	}
	out := append([]byte{}, file...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...)
}

// readFromTarGz returns the contents of the named members of a gzipped tar (names without a
// leading "./"); a member that is there but not a regular file maps to nil.
func readFromTarGz(path string, names []string) (map[string][]byte, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	found := map[string][]byte{}
	for len(found) < len(want) {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		if !want[name] {
			continue
		}
		found[name] = nil
		if hdr.Typeflag == tar.TypeReg {
			if found[name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
	return found, nil
}
