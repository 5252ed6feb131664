package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped libvirt configuration must put the socket where launcherSocketDir says: the
// launcher and the handler are written against the constant, the image against the files.
func TestShippedLibvirtConfigUsesSocketDir(t *testing.T) {
	dir := filepath.Join("..", "..", launcherImageDir)
	var files []File
	for _, name := range []string{"libvirtd.conf"} {
		f, err := fileFromDisk(filepath.Join(dir, name), "/etc/libvirt/"+name, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := checkSocketDir(files); err != nil {
		t.Fatal(err)
	}
}

func TestWithAccountAddsOnce(t *testing.T) {
	base := []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin")
	once := withAccount(base, qemuUser)
	if !strings.HasSuffix(string(once), "\n"+qemuUser+"\n") {
		t.Fatalf("entry not appended on its own line:\n%s", once)
	}
	if twice := withAccount(once, qemuUser); !bytes.Equal(once, twice) {
		t.Fatalf("entry added twice:\n%s", twice)
	}
}

func TestPinnedDependency(t *testing.T) {
	rec := map[string]string{"Package": "linux-image-cloud-amd64", "Depends": "linux-image-6.1.0-48-cloud-amd64 (= 6.1.172-1)"}
	name, version, err := pinnedDependency(rec, "linux-image-")
	if err != nil || name != "linux-image-6.1.0-48-cloud-amd64" || version != "6.1.172-1" {
		t.Fatalf("got %q %q %v", name, version, err)
	}
	if _, _, err := pinnedDependency(map[string]string{"Depends": "libc6 (>= 2.34)"}, "linux-image-"); err == nil {
		t.Fatal("no error for a Depends without the package")
	}
}

// The initramfs must be the newc format the kernel reads: every header 4-byte aligned, a
// trailer at the end, and the same bytes for the same entries.
func TestInitramfsNewcLayout(t *testing.T) {
	entries := func() []cpioEntry {
		return []cpioEntry{
			{Path: "init", Mode: cpioRegular | 0o755, Data: []byte("#!/bin/sh\n")},
			{Path: "bin", Mode: cpioDir | 0o755},
			{Path: "bin/sh", Mode: cpioSymlink | 0o777, Data: []byte("busybox")},
			{Path: "dev", Mode: cpioDir | 0o755},
			{Path: "dev/console", Mode: cpioCharDev | 0o600, Major: 5, Minor: 1},
		}
	}
	a, err := gzipInitramfs(entries())
	if err != nil {
		t.Fatal(err)
	}
	b, err := gzipInitramfs(entries())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("same entries gave different archives")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for off := 0; ; {
		if off%4 != 0 || !bytes.HasPrefix(raw[off:], []byte("070701")) {
			t.Fatalf("no newc header at offset %d", off)
		}
		hex := func(field int) int {
			var v int
			for _, c := range raw[off+6+8*field : off+14+8*field] {
				v = v*16 + strings.IndexByte("0123456789abcdef", c)
			}
			return v
		}
		size, nameSize := hex(6), hex(11)
		name := string(raw[off+110 : off+110+nameSize-1])
		names = append(names, name)
		off = align4(align4(off+110+nameSize) + size)
		if name == "TRAILER!!!" {
			if len(bytes.Trim(raw[off:], "\x00")) != 0 {
				t.Fatal("data after the trailer")
			}
			break
		}
	}
	want := "bin bin/sh dev dev/console init TRAILER!!!"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("members %q, want %q (sorted, parents first)", got, want)
	}
}

func align4(n int) int { return (n + 3) &^ 3 }
