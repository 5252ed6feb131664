package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// KubeVirt containerDisk images: one layer holding a disk image in /disk/, owned by the qemu
// user (107), and nothing else: no shell, no entrypoint. KubeVirt finds the one file in /disk
// and uses it as a backing file, so its name is free.
//
// A disk takes minutes to build (debootstrap) or at least a script run, so it is built once
// per cache key like the launcher's base, and kept in the cache with its layer beside it: the
// layer is already gzipped, so a warm build only hashes it instead of recompressing hundreds
// of megabytes.
const (
	containerDiskDir = "/disk"
	// containerDiskOwner is the qemu user and group of KubeVirt's launcher.
	containerDiskOwner = 107

	testguestDiskDir    = "hack/images/testguest-disk"
	testguestDiskScript = "build-disk.sh"
	testguestDiskName   = "testguest.img"
	// bootdisk.sh lays out the disks and installs GRUB; both disk images source it.
	bootdiskLib = "hack/images/debian-guest/bootdisk.sh"
)

func init() {
	register("testguest-disk", func(b *Builder) (v1.Image, error) { return b.testguestDiskImage() })
}

// testguestDiskImage is the testguest (guest.go) as a disk firmware boots: the same kernel and
// initramfs with the same command line, behind GRUB for BIOS and UEFI.
func (b *Builder) testguestDiskImage() (v1.Image, error) {
	kernel, initrds, version, err := b.testguestBoot(nil)
	if err != nil {
		return nil, err
	}
	initrd := initrds[0]
	// The script takes files; the kernel and initramfs are part of the cache key as well.
	tmp, err := os.MkdirTemp("", "testguest-disk")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	vmlinuz, initrdFile := filepath.Join(tmp, "vmlinuz"), filepath.Join(tmp, "initrd.img")
	if err := os.WriteFile(vmlinuz, kernel, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(initrdFile, initrd, 0o644); err != nil {
		return nil, err
	}
	inputs, err := dirFiles(filepath.Join(b.Root, testguestDiskDir))
	if err != nil {
		return nil, err
	}
	inputs = append(inputs, filepath.Join(b.Root, bootdiskLib), vmlinuz, initrdFile)
	key, err := contentKey(inputs...)
	if err != nil {
		return nil, err
	}
	disk := filepath.Join(b.Cache, "testguest-disk", key+".img")
	script := filepath.Join(b.Root, testguestDiskDir, testguestDiskScript)
	if err := buildCached(disk, "testguest-disk", script, disk, vmlinuz, initrdFile); err != nil {
		return nil, err
	}
	img, err := containerDiskImage(disk, testguestDiskName)
	if err != nil {
		return nil, err
	}
	return withConfig(img, v1.Config{Labels: map[string]string{guestKernelLabel: version}})
}

// buildCached runs bash script args... when out is not there yet. The script writes out
// itself, last, with a rename, so a file that exists is complete.
func buildCached(out, what, script string, args ...string) error {
	if _, err := os.Stat(out); err == nil {
		return nil
	} else if !os.IsNotExist(err) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "imagebuilder: %s %s not cached; building it\n", what, filepath.Base(out))
	start := time.Now()
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s with %s: %w", what, filepath.Base(script), err)
	}
	if _, err := os.Stat(out); err != nil {
		return fmt.Errorf("%s wrote no %s: %w", filepath.Base(script), out, err)
	}
	fmt.Fprintf(os.Stderr, "imagebuilder: %s built in %s\n", what, time.Since(start).Round(time.Second))
	return nil
}

// containerDiskImage is the containerDisk image of the disk file local, as /disk/<name>.
func containerDiskImage(local, name string) (v1.Image, error) {
	layerPath := local + ".layer.tar.gz"
	if _, err := os.Stat(layerPath); os.IsNotExist(err) {
		if err := writeDiskLayerFile(local, name, layerPath); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromFile(layerPath)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	return withConfig(img, v1.Config{})
}

// writeDiskLayerFile gzips the layer of local into path, through a temporary file so that an
// interrupted build leaves no torn layer in the cache.
func writeDiskLayerFile(local, name, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// No name and no mtime in the gzip header: the same disk gives the same layer.
	zw := gzip.NewWriter(tmp)
	if err := writeDiskLayer(zw, local, name); err != nil {
		tmp.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; the cache's other entries are 0644.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeDiskLayer writes the uncompressed layer: the directory /disk and the file
// /disk/<name> with local's contents, both owned by 107:107 and read-only (KubeVirt only
// reads the disk, as the backing file of the VM's own overlay), with fixed timestamps.
func writeDiskLayer(w io.Writer, local, name string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	dir := containerDiskDir[1:]
	tw := tar.NewWriter(w)
	hdrs := []*tar.Header{
		{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o555},
		{Typeflag: tar.TypeReg, Name: path.Join(dir, name), Mode: 0o444, Size: st.Size()},
	}
	for _, h := range hdrs {
		h.Uid, h.Gid, h.ModTime = containerDiskOwner, containerDiskOwner, epoch
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}

// dirFiles lists the regular files directly in dir, sorted: the inputs of a cache key, so
// that a new config file changes it without being named here.
func dirFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
