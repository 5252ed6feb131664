package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
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

// The virtiofsd image is its packages' trees on one root with the merged-/usr links: shared
// directories merge, but a path two places ship, or a package's own /lib where the link is,
// would make the image depend on which one wins.
func TestMergeTrees(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trees []map[string]string // path -> content; "->target" makes a symlink
		want  map[string]string   // a few paths of the result and their content or link
		err   string
	}{
		{
			name: "shared directories",
			trees: []map[string]string{
				{"usr/libexec/virtiofsd": "elf", "usr/lib/qemu/virtiofsd": "->../../libexec/virtiofsd"},
				{"usr/lib/x86_64-linux-gnu/libc.so.6": "libc", "usr/lib64/ld-linux-x86-64.so.2": "->../lib/x86_64-linux-gnu/ld.so"},
			},
			want: map[string]string{"/usr/libexec/virtiofsd": "elf", "/usr/lib/qemu/virtiofsd": "->../../libexec/virtiofsd",
				"/usr/lib/x86_64-linux-gnu/libc.so.6": "libc", "/lib64": "->usr/lib64", "/usr/lib": "dir"},
		},
		{
			name:  "a file in two packages",
			trees: []map[string]string{{"usr/share/x": "a"}, {"usr/share/x": "b"}},
			err:   "/usr/share/x is in two packages",
		},
		{
			name:  "a package's /lib where the merged-/usr link is",
			trees: []map[string]string{{"lib/x86_64-linux-gnu/libc.so.6": "libc"}},
			err:   "/lib is in two packages or replaces a merged-/usr link",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trees []string
			for _, tree := range tc.trees {
				dir := t.TempDir()
				for p, content := range tree {
					local := filepath.Join(dir, p)
					if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
						t.Fatal(err)
					}
					var err error
					if target, ok := strings.CutPrefix(content, "->"); ok {
						err = os.Symlink(target, local)
					} else {
						err = os.WriteFile(local, []byte(content), 0o644)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				trees = append(trees, dir)
			}
			files, err := mergeTrees(trees, mergedUsr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range files {
				switch {
				case f.Dir:
					got[f.Path] = "dir"
				case f.Link != "":
					got[f.Path] = "->" + f.Link
				default:
					got[f.Path] = string(f.Data)
				}
			}
			for p, w := range tc.want {
				if got[p] != w {
					t.Errorf("%s: got %q, want %q", p, got[p], w)
				}
			}
		})
	}
}

// The trixie configuration is apt's own only in what the options name: its sources (the
// launcher's mirrors, trixie with its updates and security fixes), lists and cache in the
// builder's cache, no dpkg status.
func TestSuiteApt(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("no apt-get on this machine")
	}
	t.Setenv("DEBIAN_MIRROR", "http://mirror.example/debian/")
	t.Setenv("DEBIAN_SECURITY_MIRROR", "http://mirror.example/debian-security")
	b := &Builder{Root: filepath.Join("..", ".."), Cache: t.TempDir()}
	apt, err := b.suiteApt("trixie")
	if err != nil {
		t.Fatal(err)
	}
	sources, err := os.ReadFile(filepath.Join(b.Cache, "apt-trixie", "sources.list"))
	want := "deb http://mirror.example/debian trixie main\ndeb http://mirror.example/debian trixie-updates main\n" +
		"deb http://mirror.example/debian-security trixie-security main\n"
	if err != nil || string(sources) != want {
		t.Errorf("sources.list %q (%v), want %q", sources, err, want)
	}
	args := strings.Join(apt.command("apt-get", "update").Args, " ")
	for _, want := range []string{
		"-o Dir::Etc::SourceList=" + filepath.Join(b.Cache, "apt-trixie", "sources.list"),
		"-o Dir::Etc::SourceParts=" + filepath.Join(b.Cache, "apt-trixie", "sources.list.d"),
		"-o Dir::State::Lists=" + filepath.Join(b.Cache, "apt-trixie", "lists"),
		"-o Dir::Cache=" + filepath.Join(b.Cache, "apt-trixie", "cache"),
		"-o Dir::State::Status=/dev/null",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("%s lacks %s", args, want)
		}
	}
	if !strings.HasPrefix(args, "apt-get -o ") || !strings.HasSuffix(args, " update") {
		t.Errorf("options not between the tool and its arguments: %s", args)
	}
	if got := strings.Join(hostApt.command("apt-cache", "show", "x").Args, " "); got != "apt-cache show x" {
		t.Errorf("the machine's configuration: %s", got)
	}
}
