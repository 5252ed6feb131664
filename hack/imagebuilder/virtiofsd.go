package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/vmctl/vmctl/launcher/layout"
)

// The virtiofsd image runs KubeVirt's virtiofs filesystems, a container per filesystem in the
// launcher pod, as the pod's unprivileged user: virtiofsd --sandbox=none. It is Debian
// trixie's virtiofsd (Rust, 1.13) because bookworm has only QEMU 7.2's C virtiofsd, which
// must chroot or unshare namespaces, both refused to an unprivileged pod. The packages are
// unpacked as they are (no dpkg, apt or shell) on the merged-/usr links trixie expects.
const (
	virtiofsdSuite      = "trixie"
	virtiofsdEntrypoint = "/usr/libexec/virtiofsd"
)

// virtiofsdPackages is virtiofsd and the libraries it loads. Its Depends also names uidmap,
// left out: only --sandbox=namespace with uid maps runs newuidmap.
var virtiofsdPackages = []string{"virtiofsd", "libc6", "libcap-ng0", "libgcc-s1", "libseccomp2"}

// virtiofsdUser is the launcher's qemu user: QEMU connects to the socket virtiofsd makes.
var virtiofsdUser = fmt.Sprintf("%d:%d", layout.LauncherUID, layout.LauncherGID)

// mergedUsr are base-files' links, without which the ELF interpreter /lib64/ld-linux-x86-64.so.2
// is not found.
var mergedUsr = []File{
	{Path: "/bin", Link: "usr/bin"},
	{Path: "/lib", Link: "usr/lib"},
	{Path: "/lib64", Link: "usr/lib64"},
	{Path: "/sbin", Link: "usr/sbin"},
}

func init() {
	register("virtiofsd", func(b *Builder) (v1.Image, error) { return b.virtiofsdImage() })
}

func (b *Builder) virtiofsdImage() (v1.Image, error) {
	apt, err := b.suiteApt(virtiofsdSuite)
	if err != nil {
		return nil, err
	}
	trees, err := b.debTrees(apt, virtiofsdPackages...)
	if err != nil {
		return nil, err
	}
	// A library a later virtiofsd needs, from a package not listed, fails here, not in a pod.
	if _, err := elfClosure(trees, filepath.Join(trees[0], virtiofsdEntrypoint), "virtiofsdPackages in hack/imagebuilder/virtiofsd.go"); err != nil {
		return nil, err
	}
	files, err := mergeTrees(trees, mergedUsr)
	if err != nil {
		return nil, err
	}
	return filesImage(files, v1.Config{Entrypoint: []string{virtiofsdEntrypoint}, User: virtiofsdUser})
}

// suiteApt is a private apt configuration in the cache (apt-<suite>/) whose sources are
// suite, suite-updates and suite-security (main) on the launcher base's bookworm mirrors
// (DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR, else the machine's apt sources, as
// debian-root.sh finds them): virtiofsd and its libc get their security fixes. It has its own
// lists and package cache, and no dpkg status: the machine's installed packages do not count.
func (b *Builder) suiteApt(suite string) (aptConfig, error) {
	mirrors, err := b.debianMirrors()
	if err != nil {
		return aptConfig{}, err
	}
	dir := filepath.Join(b.Cache, "apt-"+suite)
	sources := filepath.Join(dir, "sources.list")
	lines := []byte(fmt.Sprintf("deb %[1]s %[3]s main\ndeb %[1]s %[3]s-updates main\ndeb %[2]s %[3]s-security main\n", mirrors[0], mirrors[1], suite))
	if old, err := os.ReadFile(sources); err != nil || !bytes.Equal(old, lines) {
		// New sources: without lists the first lookup fails and updates them all.
		if err := os.RemoveAll(filepath.Join(dir, "lists")); err != nil {
			return aptConfig{}, err
		}
	}
	// apt fails without its partial directories; the empty sources.list.d keeps the machine's out.
	for _, d := range []string{"sources.list.d", "lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return aptConfig{}, err
		}
	}
	if err := os.WriteFile(sources, lines, 0o644); err != nil {
		return aptConfig{}, err
	}
	return aptConfig{opts: []string{
		"Dir::Etc::SourceList=" + sources,
		"Dir::Etc::SourceParts=" + filepath.Join(dir, "sources.list.d"),
		"Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"Dir::Cache=" + filepath.Join(dir, "cache"),
		"Dir::State::Status=/dev/null",
		"APT::Architecture=amd64",
	}}, nil
}

// debianMirrors are the launcher base's mirror and security mirror, from
// hack/images/debian-root.sh's own lookup.
func (b *Builder) debianMirrors() ([2]string, error) {
	cmd := exec.Command("bash", "-c", `set -euo pipefail
log() { echo "imagebuilder: virtiofsd packages from the $*" >&2; }
source "$0"
debian_mirror DEBIAN_MIRROR "$suite" "$default_mirror"
debian_mirror DEBIAN_SECURITY_MIRROR "$suite-security" "$default_security_mirror"`, filepath.Join(b.Root, debianRootLib))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 {
		return [2]string{}, fmt.Errorf("debian mirrors from %s: %v (%q)", debianRootLib, err, out)
	}
	return [2]string{f[0], f[1]}, nil
}

// mergeTrees is the files of the unpacked package trees and extra, as one root: directories
// shared, any other path in two places an error. Files are root's; setuid bits are dropped.
func mergeTrees(trees []string, extra []File) ([]File, error) {
	byPath := map[string]File{}
	for _, f := range extra {
		byPath[f.Path] = f
	}
	for _, tree := range trees {
		err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == tree {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(tree, p)
			f := File{Path: "/" + filepath.ToSlash(rel), Mode: int64(info.Mode().Perm())}
			switch {
			case info.IsDir():
				f.Dir = true
			case info.Mode()&fs.ModeSymlink != 0:
				f.Link, err = os.Readlink(p)
			case info.Mode().IsRegular():
				f.Data, err = os.ReadFile(p)
			default:
				return fmt.Errorf("%s: not a file, directory or symlink", p)
			}
			if old, dup := byPath[f.Path]; dup && !(old.Dir && f.Dir) {
				return fmt.Errorf("%s is in two packages or replaces a merged-/usr link (%s)", f.Path, tree)
			}
			byPath[f.Path] = f
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	return files, nil
}
