package downwardmetrics

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// readDisk reads the disk as a guest's vhostmd client does: the header, then the body it
// announces, checked against its sum.
func readDisk(t *testing.T, path string) (header, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h header
	if err := binary.Read(bytes.NewReader(raw), binary.BigEndian, &h); err != nil {
		t.Fatal(err)
	}
	body := raw[headerSize : headerSize+int(h.Length)]
	var sum int32
	for _, b := range body {
		sum += int32(b)
	}
	if sum != h.Checksum {
		t.Errorf("checksum %d, body sums to %d", h.Checksum, sum)
	}
	return h, body
}

func TestTheDiskHasVhostmdsLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vhostmd0")
	if err := CreateDisk(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != DiskSize {
		t.Fatalf("disk %v, %v; want %d bytes", fi, err, DiskSize)
	}
	h, body := readDisk(t, path)
	if string(h.Signature[:]) != "mvbd" || h.Busy != 0 || string(body) != "<metrics></metrics>\n" {
		t.Fatalf("new disk: header %+v, body %q", h, body)
	}

	doc := Report("node1", VMStats{VCPUs: 2}, nil).Marshal()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := WriteDisk(f, doc); err != nil {
		t.Fatal(err)
	}
	if h, body := readDisk(t, path); h.Busy != 0 || !bytes.Equal(body, doc) {
		t.Fatalf("after a write: header %+v, body %q; want %q", h, body, doc)
	}
	if err := WriteDisk(f, make([]byte, DiskSize)); err == nil {
		t.Fatal("a document larger than the disk was written")
	}
}
