// Package diskcopy copies a kernelBoot's kernel and initrd out of their container image into a
// launcher pod's private directory. It runs as virt-launcher's copy-file subcommand in an init
// container whose image is the user's, so it must need nothing from that image: plain Go, no
// shell, no cp. (containerDisks are not copied: launcher/containerdisk serves them in place.)
package diskcopy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

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
