package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// nonRoot is the user of components that need no privilege.
const nonRoot = "65532:65532"

// staticComponents are the components that run as a static binary alone in their image,
// with the user each runs as. The Dockerfile has a target for each (dockerfile_test.go).
var staticComponents = map[string]string{
	"virt-controller": nonRoot,
	"virt-api":        nonRoot,
	"vmctl":           nonRoot,
	"virtctl":         nonRoot,
	// The node agent reaches launcher sockets and host paths that are root's.
	"virt-handler": "0:0",
}

func init() {
	// Small programs of the project's own, built here: the local cluster's pod sandbox and
	// the e2e tests' web server.
	for name, pkg := range map[string]string{"pause": "./hack/pause", "hello": "./test/images/hello"} {
		register(name, func(b *Builder) (v1.Image, error) { return b.programImage(".", pkg, name) })
	}
	// The local cluster's DNS (hack/cluster/coredns.yaml), from its own pinned module.
	register("coredns", func(b *Builder) (v1.Image, error) { return b.programImage("hack/tools/coredns", ".", "coredns") })
	for binary, user := range staticComponents {
		register(binary, func(b *Builder) (v1.Image, error) {
			return b.staticImage(filepath.Join(b.Root, "_out", "bin", binary), binary, user)
		})
	}
}

// staticImage is a static Go binary alone on an empty base, as its image's entrypoint.
func (b *Builder) staticImage(local, binary, user string) (v1.Image, error) {
	if _, err := os.Stat(local); err != nil {
		return nil, fmt.Errorf("%w (run make build first)", err)
	}
	f, err := fileFromDisk(local, "/usr/bin/"+binary, 0o755)
	if err != nil {
		return nil, err
	}
	return filesImage([]File{f}, v1.Config{Entrypoint: []string{"/usr/bin/" + binary}, User: user})
}

// programImage builds a Go main package that is not one of the project's binaries, in the
// module at dir (relative to the repository), and puts it alone in an image.
func (b *Builder) programImage(dir, pkg, name string) (v1.Image, error) {
	out := filepath.Join(b.Root, "_out", "bin", name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = filepath.Join(b.Root, dir), os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build %s: %w", pkg, err)
	}
	return b.staticImage(out, name, nonRoot)
}

// filesImage is files in one layer on an empty base, run as cfg says.
func filesImage(files []File, cfg v1.Config) (v1.Image, error) {
	layer, err := layerFromFiles(files)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	return withConfig(img, cfg)
}

// withConfig sets an image's run configuration for linux/amd64 with a fixed creation time.
func withConfig(img v1.Image, cfg v1.Config) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: epoch}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	cf.Config = cfg
	return mutate.ConfigFile(img, cf)
}
