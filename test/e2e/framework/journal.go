package framework

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vmctl/vmctl/launcher/layout"
)

// The journal guest (kernel argument vmctl.journal, hack/images/guest/init) appends one
// 512-byte record a second to its PVC's raw disk: "VMCTL-JOURNAL <seq> <boot> <md5>", record
// <seq> in sector <seq>, never rewritten. The host reads the disk file read-only: a record
// it has seen is in the file, so no crash of the guest, its launcher or its node may change
// it later. Only a second instance writing the same disk, or a restart that does not continue
// after the last record, would.

const (
	journalSector = 512
	journalMagic  = "VMCTL-JOURNAL "
	// 8 MiB: 16384 records, four and a half hours of writing; the full run takes under one.
	journalSize = 8 << 20
)

// JournalPVC makes an empty 8 MiB raw disk in a hostPath volume under /tmp and a claim bound
// to it, like DiskPVC but with nothing to convert: every node of the local cluster
// is this machine, so the volume behaves as shared storage does. It returns the disk file.
func (f *Framework) JournalPVC(name string) string {
	t := f.t
	t.Helper()
	dir := f.pvDir(name)
	img := filepath.Join(dir, layout.PVCDiskFile)
	if err := os.WriteFile(img, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, journalSize); err != nil {
		t.Fatal(err)
	}
	f.boundClaim(dir, name, *resource.NewQuantity(journalSize, resource.BinarySI))
	return img
}

// Journal is the records read from the disk, in order: records[i] is sector i.
type Journal struct {
	Records [][]byte
	Boots   map[string]bool
}

// ReadJournal reads records from the start of the disk up to the first empty sector. A
// non-empty sector that is not a valid record with its own sequence number is an error: a
// torn, overwritten or misplaced record.
func ReadJournal(path string) (Journal, error) {
	j := Journal{Boots: map[string]bool{}}
	file, err := os.Open(path)
	if err != nil {
		return j, err
	}
	defer file.Close()
	buf := make([]byte, 64*journalSector)
	for off := int64(0); off < journalSize; off += int64(len(buf)) {
		n, err := file.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return j, err
		}
		for s := 0; s+journalSector <= n; s += journalSector {
			sector := buf[s : s+journalSector]
			if sector[0] == 0 {
				return j, nil
			}
			seq := len(j.Records)
			boot, err := checkRecord(sector, seq)
			if err != nil {
				return j, fmt.Errorf("sector %d: %w", seq, err)
			}
			j.Boots[boot] = true
			j.Records = append(j.Records, bytes.Clone(sector))
		}
		if n < len(buf) {
			return j, nil
		}
	}
	return j, nil
}

// checkRecord validates one record and returns the boot that wrote it.
func checkRecord(sector []byte, seq int) (string, error) {
	line, ok := bytes.CutPrefix(bytes.TrimRight(sector, " \n"), []byte(journalMagic))
	if !ok {
		return "", fmt.Errorf("no record: %q", truncate(sector))
	}
	fields := strings.Fields(string(line))
	if len(fields) != 3 {
		return "", fmt.Errorf("malformed record %q", truncate(sector))
	}
	if n, err := strconv.Atoi(fields[0]); err != nil || n != seq {
		return "", fmt.Errorf("record numbered %q in sector %d", fields[0], seq)
	}
	sum := md5.Sum([]byte(fields[0] + " " + fields[1]))
	if hex.EncodeToString(sum[:]) != fields[2] {
		return "", fmt.Errorf("bad checksum in %q", truncate(sector))
	}
	return fields[1], nil
}

func truncate(b []byte) string {
	return string(bytes.TrimRight(b[:min(len(b), 80)], " \x00"))
}

// Keeps fails when a record of before is missing or different in after.
func (after Journal) Keeps(before Journal) error {
	if len(after.Records) < len(before.Records) {
		return fmt.Errorf("%d records, %d were written before", len(after.Records), len(before.Records))
	}
	for i, r := range before.Records {
		if !bytes.Equal(after.Records[i], r) {
			return fmt.Errorf("record %d changed: %q, was %q", i, truncate(after.Records[i]), truncate(r))
		}
	}
	return nil
}
