package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sort"
)

// An initramfs written here rather than with cpio(1): the output depends on nothing but the
// entries (fixed mtimes, owners and inode numbers), and device nodes such as /dev/console can
// be added without being root or creating them on disk.

// File type bits of a cpio mode.
const (
	cpioDir     = 0o040000
	cpioRegular = 0o100000
	cpioSymlink = 0o120000
	cpioCharDev = 0o020000
)

// cpioEntry is one member of an initramfs.
type cpioEntry struct {
	// Path inside the initramfs, without a leading slash.
	Path string
	// Mode with its file type bits (cpioDir, ...).
	Mode uint32
	// Data is a regular file's contents or a symlink's target.
	Data []byte
	// Major and Minor number a device node.
	Major, Minor uint32
}

// gzipInitramfs packs entries, sorted by path, as a gzipped newc cpio archive: the format
// and compression every Linux kernel unpacks. Parents must be listed before their children,
// which sorting by path gives as long as each directory has an entry of its own.
func gzipInitramfs(entries []cpioEntry) ([]byte, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	var buf bytes.Buffer
	// A zero gzip header (no name, no mtime) keeps the output reproducible.
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if i > 0 && entries[i-1].Path == e.Path {
			return nil, fmt.Errorf("initramfs: %s listed twice", e.Path)
		}
		nlink := 1
		if e.Mode&0o170000 == cpioDir {
			nlink = 2
		}
		if err := writeNewc(zw, uint32(i+1), e, nlink); err != nil {
			return nil, err
		}
	}
	if err := writeNewc(zw, 0, cpioEntry{Path: "TRAILER!!!"}, 1); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeNewc writes one "070701" header, the name and the data, each padded to 4 bytes.
func writeNewc(w interface{ Write([]byte) (int, error) }, ino uint32, e cpioEntry, nlink int) error {
	name := e.Path + "\x00"
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.Mode, 0, 0, nlink, 0, len(e.Data), 0, 0, e.Major, e.Minor, len(name), 0)
	var b bytes.Buffer
	b.WriteString(hdr)
	b.WriteString(name)
	pad(&b)
	b.Write(e.Data)
	pad(&b)
	_, err := w.Write(b.Bytes())
	return err
}

// pad fills b with zeros to a multiple of 4 bytes; every newc header starts so aligned.
func pad(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}
