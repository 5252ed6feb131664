// Package diskcopy copies disks and kernels out of container images into a launcher pod's
// private directory. It runs as virt-launcher's copy-disk and copy-file subcommands in init
// containers whose image is the user's (a containerDisk, a kernelBoot image), so it must need
// nothing from that image: plain Go, no shell, no cp.
package diskcopy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vmctl/vmctl/launcher/layout"
)

// qcow2Magic starts every qcow2 image ("QFI\xfb").
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// Disk copies a containerDisk to destDir/disk.qcow2 or destDir/disk.raw, by the file's
// first bytes (libvirt does not probe formats, so the name tells the handler the format).
// src is the image file, or a directory whose first regular file by name is taken (the
// containerDisk convention: a single file under /disk). It returns the copy's path.
func Disk(src, destDir string) (string, error) {
	file, err := diskFile(src)
	if err != nil {
		return "", err
	}
	qcow2, err := isQcow2(file)
	if err != nil {
		return "", err
	}
	name := layout.RawDiskFile
	if qcow2 {
		name = layout.Qcow2DiskFile
	}
	dest := filepath.Join(destDir, name)
	return dest, File(file, dest)
}

// diskFile resolves src to the disk image file.
func diskFile(src string) (string, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if fi.Mode().IsRegular() {
		return src, nil
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is neither a regular file nor a directory", src)
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
	return "", fmt.Errorf("no regular file in %s", src)
}

func isQcow2(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(qcow2Magic))
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return false, nil // shorter than the magic: raw
		}
		return false, err
	}
	return bytes.Equal(head, qcow2Magic), nil
}

// File copies src to dest, creating dest's directory. It writes a temporary file next to
// dest and renames it, so a restarted init container never leaves a half copy under the
// final name. Blocks of zeros become holes: raw disks are mostly empty.
func File(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := sparseCopy(tmp, in, fi.Size()); err != nil {
		tmp.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dest, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}

const blockSize = 64 << 10

// sparseCopy copies in to out, seeking over all-zero blocks instead of writing them, then
// sets out's size (a trailing hole has no write to extend the file).
func sparseCopy(out *os.File, in io.Reader, size int64) error {
	buf := make([]byte, blockSize)
	zero := make([]byte, blockSize)
	var off int64
	for {
		n, err := io.ReadFull(in, buf)
		if n > 0 {
			if bytes.Equal(buf[:n], zero[:n]) {
				if _, err := out.Seek(int64(n), io.SeekCurrent); err != nil {
					return err
				}
			} else if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if off != size {
		return fmt.Errorf("read %d bytes, the file has %d: changed while copying", off, size)
	}
	return out.Truncate(off)
}
