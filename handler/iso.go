package handler

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/kdomanski/iso9660"
)

// The cloud-init disks' volume labels: cloud-init's NoCloud and ConfigDrive sources look for them.
const (
	NoCloudLabel     = "cidata"
	ConfigDriveLabel = "config-2"
)

type isoFile struct {
	name    string
	content []byte
}

// ensureISO writes the ISO at rel unless it exists: the data of an instance never changes,
// and the guest may have it open.
func ensureISO(root *os.Root, rel, label string, files []isoFile) error {
	return createOnce(root, rel, func(f *os.File) error { return writeISO(f, label, files) })
}

// writeISO writes an ISO 9660 image (no Joliet or Rock Ridge extensions) with the files,
// directories included. The library lowercases names (dashes and underscores kept): Linux's
// isofs shows them so, which is what cloud-init reads, and Windows matches names regardless of
// case; cloudbase-init reads the config drive's raw image itself (docs/cloud-init.md).
func writeISO(w io.Writer, label string, files []isoFile) error {
	iw, err := iso9660.NewWriter()
	if err != nil {
		return fmt.Errorf("staging the cloud-init ISO: %w", err)
	}
	defer func() { _ = iw.Cleanup() }()
	for _, f := range files {
		if err := iw.AddFile(bytes.NewReader(f.content), f.name); err != nil {
			return fmt.Errorf("staging %s: %w", f.name, err)
		}
	}
	return iw.WriteTo(w, label)
}
