package diskcopy

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

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
