// Command imagebuilder builds the project's container images without a Docker engine, with
// go-containerregistry, as image tarballs the local cluster's containerd imports.
//
//	go run ./hack/imagebuilder [--out _out/images] [--tag devel] [target...]
//
// Each target writes <out>/<target>.tar holding the image vmctl/<target>:<tag>. Without
// targets it builds them all. Component images take their binary from _out/bin (make build).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/spf13/pflag"
)

// Builder is what every target may use: where the repository, the output and the cache are.
type Builder struct {
	// Root is the repository root.
	Root string
	// Cache keeps expensive inputs (base root filesystems, downloaded packages) across clones.
	Cache string
	// Tag is the tag every image gets.
	Tag string
}

// target builds one image.
type target func(b *Builder) (v1.Image, error)

var targets = map[string]target{}

// register adds a target; each target's file registers itself from init.
func register(name string, build target) {
	if _, dup := targets[name]; dup {
		panic("imagebuilder: target registered twice: " + name)
	}
	targets[name] = build
}

// ImageName is the reference a target's image is stored under.
func (b *Builder) ImageName(target string) string {
	return fmt.Sprintf("vmctl/%s:%s", target, b.Tag)
}

func main() {
	out := pflag.String("out", "_out/images", "directory for the image tarballs")
	cache := pflag.String("cache", defaultCache(), "directory for expensive inputs kept across clones")
	tag := pflag.String("tag", "devel", "tag of every image")
	pflag.Parse()

	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	b := &Builder{Root: root, Cache: *cache, Tag: *tag}
	names := pflag.Args()
	if len(names) == 0 {
		for n := range targets {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, n := range names {
		if err := b.write(n, filepath.Join(*out, n+".tar")); err != nil {
			fail(fmt.Errorf("%s: %w", n, err))
		}
	}
}

func (b *Builder) write(target, path string) error {
	build, ok := targets[target]
	if !ok {
		return fmt.Errorf("unknown target")
	}
	img, err := build(b)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(b.ImageName(target))
	if err != nil {
		return err
	}
	// Write to a temporary file first so an interrupted build never leaves a torn tarball.
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", b.ImageName(target), digest, path)
	return os.Rename(tmp, path)
}

func defaultCache() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "vmctl")
	}
	return filepath.Join(os.TempDir(), "vmctl-cache")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "imagebuilder:", err)
	os.Exit(1)
}
