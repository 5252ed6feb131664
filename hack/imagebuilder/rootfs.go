package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The launcher's base root filesystem takes debootstrap and an apt install (a minute or two),
// so it is built once per machine and kept in the cache, under a key made of everything that
// produced it: the script and the package list. Editing either makes a new base; the old one
// stays in the cache until someone deletes it. The shared debian-root.sh is part of it too.
//
// The Debian mirror is not part of the key. build-rootfs.sh takes it from $DEBIAN_MIRROR and
// $DEBIAN_SECURITY_MIRROR, else from the machine's apt sources (debian-mirror.sh), and
// every mirror serves the same packages. A base is not bit-identical across machines or
// days anyway, and switching mirrors should not throw away a base that took minutes to build.
// The script inherits the builder's environment, so the variables reach it.
const (
	launcherImageDir  = "hack/images/launcher"
	rootfsScript      = "build-rootfs.sh"
	rootfsPackageList = "packages"
	// debianRootLib has the steps the launcher base and the Debian guest share.
	debianRootLib = "hack/images/debian-root.sh"
)

// launcherBaseLayer returns the cached base root filesystem as a layer, building it first when
// this cache key has never been built on this machine.
func (b *Builder) launcherBaseLayer() (v1.Layer, string, error) {
	dir := filepath.Join(b.Root, launcherImageDir)
	key, err := contentKey(filepath.Join(dir, rootfsScript), filepath.Join(dir, rootfsPackageList), filepath.Join(b.Root, debianRootLib))
	if err != nil {
		return nil, "", fmt.Errorf("launcher base cache key: %w", err)
	}
	path := filepath.Join(b.Cache, "launcher-rootfs", "bookworm-"+key+".tar.gz")
	if _, err := os.Stat(path); os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "imagebuilder: launcher base %s not cached; building it (needs root and apt, 1-2 min)\n", key)
		start := time.Now()
		cmd := exec.Command("bash", filepath.Join(dir, rootfsScript), path, filepath.Join(dir, rootfsPackageList))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, "", fmt.Errorf("build launcher base with %s: %w", rootfsScript, err)
		}
		fmt.Fprintf(os.Stderr, "imagebuilder: launcher base built in %s\n", time.Since(start).Round(time.Second))
	} else if err != nil {
		return nil, "", err
	}
	// The file is already gzipped: LayerFromFile uses it as the compressed blob as it is, so a
	// warm build only hashes it instead of recompressing 250 MB.
	layer, err := tarball.LayerFromFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("open launcher base %s: %w", path, err)
	}
	return layer, path, nil
}

// contentKey is a short hash over the contents of files, in order, each length-prefixed so
// that moving bytes from one file to the next changes the key.
func contentKey(files ...string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
