package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The testguest's second initramfs, /boot/initrd-agent.img, is the first plus QEMU's guest
// agent: Debian's qemu-ga with the shared libraries it loads and an /etc/os-release, so the
// guest answers guest-get-osinfo and the like as a cloud image running qemu-guest-agent does,
// root's /etc/passwd and /etc/shadow entries and a chpasswd, so the agent can set root's SSH
// keys and password.
// A separate file keeps the agent (about 3 MiB) out of every other test guest's boot.
const (
	guestAgentInitrdPath = "/boot/initrd-agent.img"
	guestAgentPackages   = "agent-packages"
	guestAgentBinary     = "usr/sbin/qemu-ga"
	guestOSRelease       = "os-release"
	// libDirs are where Debian's packages put shared libraries (bookworm is not usr-merged).
	libDirA = "lib/x86_64-linux-gnu"
	libDirB = "usr/lib/x86_64-linux-gnu"
)

// agentEntries are the agent's files for the initramfs: qemu-ga, what it loads (elfClosure)
// and /etc/os-release.
func (b *Builder) agentEntries() ([]cpioEntry, error) {
	list := filepath.Join(guestImageDir, guestAgentPackages)
	pkgs, err := readList(filepath.Join(b.Root, list))
	if err != nil {
		return nil, err
	}
	trees, err := b.debTrees(hostApt, pkgs...)
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(trees[0], guestAgentBinary)
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	entries := []cpioEntry{{Path: guestAgentBinary, Mode: cpioRegular | 0o755, Data: data}}
	loads, err := elfClosure(trees, binary, list)
	if err != nil {
		return nil, err
	}
	for _, l := range loads {
		if entries, err = appendFile(entries, l.file, l.path, 0o755); err != nil {
			return nil, err
		}
	}
	// root's entries, for the agent's calls that name a user (guest-ssh-add-authorized-keys,
	// guest-set-user-password), root without a password until one is set.
	entries = append(entries,
		cpioEntry{Path: "etc/passwd", Mode: cpioRegular | 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\n")},
		cpioEntry{Path: "etc/group", Mode: cpioRegular | 0o644, Data: []byte("root:x:0:\n")},
		cpioEntry{Path: "etc/shadow", Mode: cpioRegular | 0o600, Data: []byte("root:*:20000:0:99999:7:::\n")})
	dir := filepath.Join(b.Root, guestImageDir)
	for _, f := range []struct {
		local, path string
		mode        uint32
	}{
		{guestOSRelease, "etc/os-release", 0o644},
		// chpasswd, which busybox lacks and qemu-ga runs to set a password, and a page that
		// checks one.
		{"chpasswd", "usr/sbin/chpasswd", 0o755},
		{"checkpw.cgi", "www/cgi-bin/checkpw", 0o755},
	} {
		if entries, err = appendFile(entries, filepath.Join(dir, f.local), f.path, f.mode); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

func appendFile(entries []cpioEntry, local, p string, mode uint32) ([]cpioEntry, error) {
	data, err := os.ReadFile(local)
	if err != nil {
		return nil, err
	}
	return append(entries, cpioEntry{Path: p, Mode: cpioRegular | mode, Data: data}), nil
}

// elfDeps is an ELF file's interpreter ("" for a library) and the libraries it needs.
func elfDeps(file string) (interp string, needed []string, err error) {
	f, err := elf.Open(file)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			buf := make([]byte, p.Filesz)
			if _, err := p.ReadAt(buf, 0); err != nil {
				return "", nil, fmt.Errorf("%s: reading the interpreter: %w", file, err)
			}
			interp = strings.TrimRight(string(buf), "\x00")
		}
	}
	needed, err = f.ImportedLibraries()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", file, err)
	}
	return interp, needed, nil
}

// elfLoad is a file a program loads: its path in the image and the local file.
type elfLoad struct{ path, file string }

// elfClosure is what binary loads, found in the unpacked package trees: its ELF interpreter
// at its own path, then every library it needs by DT_NEEDED (recursively), each under its
// soname in lib/x86_64-linux-gnu where the interpreter looks by default. A library no tree
// ships fails with a hint to add its package to list.
func elfClosure(trees []string, binary, list string) ([]elfLoad, error) {
	interp, needed, err := elfDeps(binary)
	if err != nil {
		return nil, err
	}
	var loads []elfLoad
	if interp != "" {
		file, err := findLibrary(trees, path.Base(interp), list)
		if err != nil {
			return nil, err
		}
		loads = append(loads, elfLoad{strings.TrimPrefix(interp, "/"), file})
	}
	seen := map[string]bool{}
	for ; len(needed) > 0; needed = needed[1:] {
		name := needed[0]
		if seen[name] {
			continue
		}
		seen[name] = true
		file, err := findLibrary(trees, name, list)
		if err != nil {
			return nil, err
		}
		loads = append(loads, elfLoad{path.Join(libDirA, name), file})
		_, more, err := elfDeps(file)
		if err != nil {
			return nil, err
		}
		needed = append(needed, more...)
	}
	return loads, nil
}

// findLibrary is the file that the library name is in one of the unpacked package trees,
// its symlinks followed inside that tree (a package's absolute links name its own root).
func findLibrary(trees []string, name, list string) (string, error) {
	for _, tree := range trees {
		for _, dir := range []string{libDirA, libDirB} {
			file, err := resolveIn(tree, path.Join(dir, name))
			if err == nil {
				return file, nil
			}
		}
	}
	return "", fmt.Errorf("no package of %s ships %s: add its package there", list, name)
}

// resolveIn follows rel's symlinks inside tree, to a regular file.
func resolveIn(tree, rel string) (string, error) {
	for range 10 {
		file := filepath.Join(tree, rel)
		fi, err := os.Lstat(file)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return file, nil
		}
		target, err := os.Readlink(file)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			rel = strings.TrimPrefix(target, "/")
		} else {
			rel = path.Join(path.Dir(rel), target)
		}
	}
	return "", fmt.Errorf("%s: too many symlinks", filepath.Join(tree, rel))
}
