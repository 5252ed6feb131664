package diskcopy

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDisk(t *testing.T) {
	qcow2 := append([]byte("QFI\xfb"), make([]byte, 100)...)
	raw := []byte("\xeb\x63\x90 boot sector")
	tests := []struct {
		name     string
		files    map[string][]byte // under the source dir; "" names the source itself
		dirs     []string          // directories under the source dir
		src      string            // relative to the temp dir
		wantName string
		want     []byte
		wantErr  bool
	}{
		{name: "qcow2 file", files: map[string][]byte{"": qcow2}, src: "src", wantName: "disk.qcow2", want: qcow2},
		{name: "raw file", files: map[string][]byte{"": raw}, src: "src", wantName: "disk.raw", want: raw},
		{name: "tiny raw file", files: map[string][]byte{"": []byte("QF")}, src: "src", wantName: "disk.raw", want: []byte("QF")},
		{name: "empty raw file", files: map[string][]byte{"": {}}, src: "src", wantName: "disk.raw", want: []byte{}},
		{name: "directory: first regular file by name", files: map[string][]byte{"b.img": raw, "a.qcow2": qcow2},
			dirs: []string{"0-subdir"}, src: "src", wantName: "disk.qcow2", want: qcow2},
		{name: "directory without files", dirs: []string{"sub"}, src: "src", wantErr: true},
		{name: "missing source", src: "nope", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, "src")
			if data, ok := tc.files[""]; ok {
				write(t, src, data)
			} else if tc.files != nil || tc.dirs != nil {
				for name, data := range tc.files {
					write(t, filepath.Join(src, name), data)
				}
				for _, d := range tc.dirs {
					if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			destDir := filepath.Join(tmp, "private", "vmi-disks", "vol") // created by Disk
			dest, err := Disk(filepath.Join(tmp, tc.src), destDir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if dest != filepath.Join(destDir, tc.wantName) {
				t.Errorf("copied to %s, want %s", dest, tc.wantName)
			}
			got, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("copy has %q, want %q", got, tc.want)
			}
			entries, _ := os.ReadDir(destDir)
			if len(entries) != 1 {
				t.Errorf("destination holds %d entries, want only the disk (no temporary files)", len(entries))
			}
		})
	}
}

func TestFileIsSparse(t *testing.T) {
	tmp := t.TempDir()
	src, dest := filepath.Join(tmp, "big.raw"), filepath.Join(tmp, "out", "kernel")
	// 8 MiB: data, a zero-filled gap (written, not a hole, as in an image layer), data,
	// and trailing zeros.
	data := make([]byte, 8<<20)
	copy(data, "head")
	copy(data[4<<20:], "middle")
	write(t, src, data)
	if err := File(src, dest); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("copy differs from the source")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dest, &st); err != nil {
		t.Fatal(err)
	}
	// Two 64 KiB blocks hold data; allow for file systems that allocate more coarsely.
	if used := st.Blocks * 512; used > 1<<20 {
		t.Errorf("copy uses %d bytes on disk, want holes for the zeros", used)
	}
	// A second copy replaces the first.
	write(t, src, []byte("v2"))
	if err := File(src, dest); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dest); string(got) != "v2" {
		t.Errorf("second copy has %q", got)
	}
}

func TestFileRejectsDirectories(t *testing.T) {
	tmp := t.TempDir()
	if err := File(tmp, filepath.Join(tmp, "x")); err == nil {
		t.Fatal("copied a directory")
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
