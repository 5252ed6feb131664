package containerdisk

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmctl/vmctl/launcher/layout"
)

func TestHold(t *testing.T) {
	qcow2 := qcow2Header(3<<30, 0)
	raw := []byte("\xeb\x63\x90 boot sector")
	tests := []struct {
		name      string
		files     map[string][]byte // under src; "" names src itself
		wantImage string            // relative to src
		wantFmt   string
		wantSize  int64
		wantErr   string
	}{
		{name: "qcow2 file", files: map[string][]byte{"": qcow2}, wantImage: "", wantFmt: "qcow2", wantSize: 3 << 30},
		{name: "raw file rounded to sectors", files: map[string][]byte{"": raw}, wantImage: "", wantFmt: "raw", wantSize: 512},
		{name: "directory: first regular file by name", files: map[string][]byte{"b.img": raw, "a.qcow2": qcow2, "0-dir/x": raw},
			wantImage: "a.qcow2", wantFmt: "qcow2", wantSize: 3 << 30},
		{name: "qcow2 with a backing file", files: map[string][]byte{"": qcow2Header(1<<30, 512)}, wantErr: "backing file"},
		{name: "empty image", files: map[string][]byte{"": {}}, wantErr: "empty"},
		{name: "directory without files", files: map[string][]byte{"sub/x": raw}, wantErr: "no regular file"},
		{name: "missing source", wantErr: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, "src")
			for name, data := range tc.files {
				p := filepath.Join(src, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dest := filepath.Join(tmp, "private", "vmi-disks", "vol")
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Hold returns once it has written its files
			if err := Hold(ctx, src, dest); err != nil {
				t.Fatal(err)
			}
			msg, _ := os.ReadFile(filepath.Join(dest, layout.DiskErrorFile))
			if tc.wantErr != "" {
				if !strings.Contains(string(msg), tc.wantErr) {
					t.Fatalf("error file says %q, want %q", msg, tc.wantErr)
				}
				return
			}
			if len(msg) > 0 {
				t.Fatalf("unexpected error file: %s", msg)
			}
			hdr, err := os.ReadFile(filepath.Join(dest, layout.Qcow2DiskFile))
			if err != nil {
				t.Fatal(err)
			}
			wantBacking := fmt.Sprintf("/proc/%d/root%s", os.Getpid(), filepath.Join(src, tc.wantImage))
			if got := backingName(hdr); got != wantBacking {
				t.Errorf("backing file %q, want %q", got, wantBacking)
			}
			if got := int64(binary.BigEndian.Uint64(hdr[24:])); got != tc.wantSize {
				t.Errorf("virtual size %d, want %d", got, tc.wantSize)
			}
			if !strings.Contains(string(hdr[headerLength:headerLength+16]), tc.wantFmt) {
				t.Errorf("backing format extension %q, want %s", hdr[headerLength:headerLength+16], tc.wantFmt)
			}
		})
	}
}

// TestOverlayIsValidForQEMU has qemu-img check the overlay's metadata and write through it:
// the base must not change and the data must read back.
func TestOverlayIsValidForQEMU(t *testing.T) {
	for _, tool := range []string{"qemu-img", "qemu-io"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian's qemu-utils)", tool)
		}
	}
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base.raw")
	baseData := []byte(strings.Repeat("base", 1024))
	if err := os.WriteFile(base, baseData, 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(tmp, "overlay")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Hold(ctx, base, dest); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dest, layout.Qcow2DiskFile)
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run("qemu-img", "check", overlay)
	var info struct {
		VirtualSize     int64  `json:"virtual-size"`
		BackingFilename string `json:"backing-filename"`
		BackingFormat   string `json:"backing-filename-format"`
	}
	if err := json.Unmarshal([]byte(run("qemu-img", "info", "--output=json", overlay)), &info); err != nil {
		t.Fatal(err)
	}
	if info.VirtualSize != int64(len(baseData)) || info.BackingFormat != "raw" || !strings.HasSuffix(info.BackingFilename, base) {
		t.Errorf("qemu-img info: %+v", info)
	}
	run("qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 0 2048", overlay)
	if out := run("qemu-io", "-f", "qcow2", "-c", "read -P 0x5a 0 2048", "-c", "read -P 0x62 2048 1", overlay); strings.Contains(out, "fail") {
		t.Errorf("read back through the overlay: %s", out)
	}
	run("qemu-img", "check", overlay)
	if got, _ := os.ReadFile(base); string(got) != string(baseData) {
		t.Error("writing through the overlay changed the base image")
	}
}

// qcow2Header is the start of a qcow2 image of the given virtual size.
func qcow2Header(size int64, backingOffset uint64) []byte {
	h := make([]byte, 512)
	copy(h, qcow2Magic)
	binary.BigEndian.PutUint32(h[4:], 3)
	binary.BigEndian.PutUint64(h[8:], backingOffset)
	binary.BigEndian.PutUint64(h[24:], uint64(size))
	return h
}

func backingName(hdr []byte) string {
	off := binary.BigEndian.Uint64(hdr[8:])
	n := binary.BigEndian.Uint32(hdr[16:])
	return string(hdr[off : off+uint64(n)])
}
