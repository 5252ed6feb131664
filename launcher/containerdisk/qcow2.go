package containerdisk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A qcow2 overlay is the guest's writable layer over a containerDisk it must not change: QEMU
// writes into the overlay and reads what it has not written from the backing file. Written
// here in Go rather than by qemu-img because the holder runs in the user's image, which has
// no tools, only the virt-launcher binary the pod copies in.
//
// The file is four parts, one cluster each (the L1 table may take more): the header with its
// extensions and the backing file name; the refcount table; one refcount block (counting the
// metadata clusters, so QEMU never allocates over them); the L1 table, all zeros (nothing
// written yet).
const (
	clusterBits     = 16
	clusterSize     = 1 << clusterBits
	qcow2Version    = 3
	headerLength    = 104 // version 3 without the compression type field
	refcountOrder   = 4   // 16-bit refcounts, QEMU's default
	extBackingFmt   = 0xe2792aca
	maxBackingName  = 1023 // QEMU's limit
	l1EntryCoverage = clusterSize * (clusterSize / 8)
)

// qcow2Magic starts every qcow2 image ("QFI\xfb").
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// Image is a disk image's format and the size the guest sees.
type Image struct {
	Format string // "raw" or "qcow2"
	Size   int64
}

// Probe reads what a disk image is. A qcow2 image must not name a backing file: inside the
// user's image it would point anywhere the holder can read. A raw image's size is rounded up
// to whole sectors, as QEMU sees it.
func Probe(f *os.File) (Image, error) {
	fi, err := f.Stat()
	if err != nil {
		return Image{}, err
	}
	head := make([]byte, 24+8)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Image{}, err
	}
	if n < len(qcow2Magic) || string(head[:4]) != string(qcow2Magic) {
		size := (fi.Size() + 511) &^ 511
		if size == 0 {
			return Image{}, fmt.Errorf("the image is empty")
		}
		return Image{Format: "raw", Size: size}, nil
	}
	if n < len(head) {
		return Image{}, fmt.Errorf("a qcow2 image shorter than its header")
	}
	if binary.BigEndian.Uint64(head[8:]) != 0 {
		return Image{}, fmt.Errorf("the qcow2 image has a backing file; a containerDisk must be self-contained")
	}
	size := int64(binary.BigEndian.Uint64(head[24:]))
	if size <= 0 {
		return Image{}, fmt.Errorf("the qcow2 image has virtual size %d", size)
	}
	return Image{Format: "qcow2", Size: size}, nil
}

// WriteOverlay writes to w an empty qcow2 image of base's size whose backing file is
// backingPath, in base's format.
func WriteOverlay(w io.WriterAt, base Image, backingPath string) error {
	if len(backingPath) == 0 || len(backingPath) > maxBackingName {
		return fmt.Errorf("backing file name of %d bytes: want 1 to %d", len(backingPath), maxBackingName)
	}
	l1Size := (base.Size + l1EntryCoverage - 1) / l1EntryCoverage
	l1Clusters := (l1Size*8 + clusterSize - 1) / clusterSize
	const refTable, refBlock, l1Table = 1 * clusterSize, 2 * clusterSize, 3 * clusterSize
	clusters := 3 + l1Clusters
	if clusters > clusterSize/2 {
		return fmt.Errorf("a virtual size of %d bytes needs more than one refcount block", base.Size)
	}

	header := make([]byte, clusterSize)
	be := binary.BigEndian
	copy(header, qcow2Magic)
	be.PutUint32(header[4:], qcow2Version)
	be.PutUint32(header[20:], clusterBits)
	be.PutUint64(header[24:], uint64(base.Size))
	be.PutUint32(header[36:], uint32(l1Size))
	be.PutUint64(header[40:], l1Table)
	be.PutUint64(header[48:], refTable)
	be.PutUint32(header[56:], 1)
	be.PutUint32(header[96:], refcountOrder)
	be.PutUint32(header[100:], headerLength)
	// Extensions: the backing format (so QEMU does not probe a raw base), then the end.
	off := headerLength
	be.PutUint32(header[off:], extBackingFmt)
	be.PutUint32(header[off+4:], uint32(len(base.Format)))
	copy(header[off+8:], base.Format)
	off += 8 + (len(base.Format)+7)&^7
	off += 8 // end-of-extensions: type 0, length 0
	be.PutUint64(header[8:], uint64(off))
	be.PutUint32(header[16:], uint32(len(backingPath)))
	copy(header[off:], backingPath)

	table := make([]byte, clusterSize)
	be.PutUint64(table, refBlock)
	block := make([]byte, clusterSize)
	for i := int64(0); i < clusters; i++ {
		be.PutUint16(block[2*i:], 1)
	}
	for _, part := range []struct {
		off  int64
		data []byte
	}{{0, header}, {refTable, table}, {refBlock, block}, {l1Table, make([]byte, l1Clusters*clusterSize)}} {
		if _, err := w.WriteAt(part.data, part.off); err != nil {
			return err
		}
	}
	return nil
}
