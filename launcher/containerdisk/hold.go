// Package containerdisk serves a containerDisk to QEMU without copying it. The launcher pod
// runs, for each containerDisk, a sidecar container of the user's image that holds the image's
// root filesystem open: the pod shares one process namespace, so QEMU in the compute container
// reads the image through /proc/<holder pid>/root, and writes go to a qcow2 overlay in the
// pod's private directory. A 2 GiB image costs the same start as a 20 MiB one.
//
// The holder runs virt-launcher's hold-disk subcommand, from the copy of the binary the pod's
// tools init container made: the user's image has nothing else to run.
package containerdisk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// Hold resolves the image at src (a file, or a directory whose first regular file is the
// image: KubeVirt's /disk convention), writes destDir/disk.qcow2 over it, and waits for ctx.
// A bad image is reported in destDir/error, where virt-handler reads it and fails the
// instance with the reason; the holder then still waits, so the pod does not crash-loop.
func Hold(ctx context.Context, src, destDir string) error {
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return err
	}
	if err := writeOverlay(src, destDir); err != nil {
		klog.ErrorS(err, "containerDisk unusable", "src", src)
		msg := fmt.Sprintf("%s: %v", src, err)
		if werr := os.WriteFile(filepath.Join(destDir, layout.DiskErrorFile), []byte(msg), 0o644); werr != nil {
			return fmt.Errorf("%s; and reporting it: %w", msg, werr)
		}
	} else {
		klog.InfoS("serving containerDisk", "src", src, "overlay", filepath.Join(destDir, layout.Qcow2DiskFile))
	}
	<-ctx.Done()
	return nil
}

// writeOverlay writes the overlay under a temporary name and renames it, so virt-handler never
// sees half a header. A holder restarted while its guest runs replaces the file: the running
// QEMU keeps the one it opened, and a new QEMU needs the new holder's /proc path anyway.
func writeOverlay(src, destDir string) error {
	file, err := imageFile(src)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := Probe(f)
	if err != nil {
		return err
	}
	// Seen from the compute container, which shares this container's process namespace.
	backing := fmt.Sprintf("/proc/%d/root%s", os.Getpid(), file)
	tmp, err := os.CreateTemp(destDir, ".overlay-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := WriteOverlay(tmp, img, backing); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(destDir, layout.Qcow2DiskFile))
}

// imageFile resolves src to an absolute path of the image file: src itself, or the first
// regular file by name in the directory src.
func imageFile(src string) (string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if fi.Mode().IsRegular() {
		return src, nil
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("neither a regular file nor a directory")
	}
	entries, err := os.ReadDir(src) // sorted by name
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		p := filepath.Join(src, e.Name())
		// Stat, not the entry's type: a symlink to the image counts.
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no regular file in the directory")
}
