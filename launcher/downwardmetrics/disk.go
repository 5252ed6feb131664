package downwardmetrics

import (
	"encoding/binary"
	"fmt"
	"os"
)

// DiskSize is the metrics disk's size, vhostmd's default (256 KiB).
const DiskSize = 256 << 10

// header is vhostmd's disk header, big-endian: the signature "mvbd", a busy flag a reader
// waits out, the sum of the body's bytes and the body's length. The XML body follows it.
type header struct {
	Signature [4]byte
	Busy      int32
	Checksum  int32
	Length    int32
}

const headerSize = 16

// CreateDisk makes the disk at path, sized and holding an empty document, so QEMU can open
// it before the first report.
func CreateDisk(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(DiskSize); err != nil {
		return err
	}
	return WriteDisk(f, Document{}.Marshal())
}

// WriteDisk replaces the disk's document with body: marked busy while the body changes,
// so a guest that reads meanwhile sees the flag and reads again.
func WriteDisk(f *os.File, body []byte) error {
	if len(body) > DiskSize-headerSize {
		return fmt.Errorf("metrics document of %d bytes does not fit the %d-byte disk", len(body), DiskSize)
	}
	h := header{Signature: [4]byte{'m', 'v', 'b', 'd'}, Busy: 1, Length: int32(len(body))}
	for _, b := range body {
		h.Checksum += int32(b)
	}
	if err := writeHeader(f, h); err != nil {
		return err
	}
	if _, err := f.WriteAt(body, headerSize); err != nil {
		return err
	}
	h.Busy = 0
	return writeHeader(f, h)
}

func writeHeader(f *os.File, h header) error {
	b, err := binary.Append(nil, binary.BigEndian, h)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	return err
}
