package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Debian packages some images are made from (the guest's kernel and busybox). They come from
// the machine's apt repositories with apt-get download, never from anywhere else, and are kept
// in the cache under their exact version: a warm build finds them without the network, and a
// new version in the apt lists is a new cache entry.
//
// An aptConfig says which apt configuration to ask: the machine's own (hostApt), or a
// private one in the cache for another suite (virtiofsd.go's trixie). Versions of different
// suites share the cache: a Debian version names the same package bytes in every suite.

// aptConfig is the apt -o options that select a configuration; none selects the machine's.
type aptConfig struct {
	opts []string
}

var hostApt aptConfig

// command runs tool (apt-get, apt-cache) with the configuration's options before args.
func (a aptConfig) command(tool string, args ...string) *exec.Cmd {
	var full []string
	for _, o := range a.opts {
		full = append(full, "-o", o)
	}
	return exec.Command(tool, append(full, args...)...)
}

func (a aptConfig) update() error {
	if out, err := a.command("apt-get", "-q", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w: %s", err, out)
	}
	return nil
}

// debTree returns a directory holding version of pkg unpacked (dpkg-deb -x), downloading and
// unpacking it first when that version is not in the cache.
func (b *Builder) debTree(a aptConfig, pkg, version string) (string, error) {
	dir := filepath.Join(b.Cache, "debs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := pkg + "_" + strings.ReplaceAll(version, ":", "%3a") + "_amd64"
	tree := filepath.Join(dir, base)
	if _, err := os.Stat(tree); err == nil {
		return tree, nil
	}
	deb := tree + ".deb"
	if _, err := os.Stat(deb); err != nil {
		if err := a.download(pkg, version, deb); err != nil {
			return "", err
		}
	}
	// Unpack beside the final name and rename: an interrupted build leaves no half tree.
	tmp, err := os.MkdirTemp(dir, base+".tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, out)
	}
	if err := os.Rename(tmp, tree); err != nil {
		return "", err
	}
	return tree, nil
}

// debTrees returns a directory holding each package's candidate version unpacked. apt's
// lists go stale as the mirror replaces versions (a download then gets 404): when a download
// fails, it runs apt-get update once and starts again from the new candidates.
func (b *Builder) debTrees(a aptConfig, pkgs ...string) ([]string, error) {
	trees, err := b.candidateTrees(a, pkgs)
	if err == nil {
		return trees, nil
	}
	fmt.Fprintf(os.Stderr, "imagebuilder: %v; running apt-get update\n", err)
	if err := a.update(); err != nil {
		return nil, err
	}
	return b.candidateTrees(a, pkgs)
}

func (b *Builder) candidateTrees(a aptConfig, pkgs []string) ([]string, error) {
	apt, err := a.records(pkgs...)
	if err != nil {
		return nil, err
	}
	var trees []string
	for _, p := range pkgs {
		tree, err := b.debTree(a, p, apt[p]["Version"])
		if err != nil {
			return nil, err
		}
		trees = append(trees, tree)
	}
	return trees, nil
}

// download fetches pkg=version into the file deb.
func (a aptConfig) download(pkg, version, deb string) error {
	fmt.Fprintf(os.Stderr, "imagebuilder: apt-get download %s=%s\n", pkg, version)
	tmp, err := os.MkdirTemp(filepath.Dir(deb), "download")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// As root, apt would hand the download to its _apt user, which cannot write to the cache.
	cmd := a.command("apt-get", "-q", "-o", "APT::Sandbox::User=root", "download", pkg+"="+version)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get download %s=%s: %w: %s", pkg, version, err, out)
	}
	got, err := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if err != nil || len(got) != 1 {
		return fmt.Errorf("apt-get download %s=%s: expected one .deb, got %v", pkg, version, got)
	}
	return os.Rename(got[0], deb)
}

// records is the control record of each package's candidate version, from one apt-cache
// call (each takes most of a second where apt keeps no binary cache, as in Debian's container
// images). When apt does not know one of them (lists never fetched on this machine), it runs
// apt-get update once and asks again.
func (a aptConfig) records(pkgs ...string) (map[string]map[string]string, error) {
	records, err := a.show(pkgs)
	if err == nil {
		return records, nil
	}
	fmt.Fprintf(os.Stderr, "imagebuilder: %v; running apt-get update\n", err)
	if err := a.update(); err != nil {
		return nil, err
	}
	return a.show(pkgs)
}

func (a aptConfig) show(pkgs []string) (map[string]map[string]string, error) {
	args := append([]string{"show", "--no-all-versions"}, pkgs...)
	out, err := a.command("apt-cache", args...).Output()
	records := map[string]map[string]string{}
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			fields = map[string]string{}
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			fields[k] = strings.TrimSpace(v)
			if k == "Package" {
				records[fields[k]] = fields
			}
		}
	}
	for _, p := range pkgs {
		if records[p]["Version"] == "" {
			return nil, fmt.Errorf("apt-cache show: no candidate version of %s (%v)", p, err)
		}
	}
	return records, sc.Err()
}

// pinnedDependency is the package of a Depends field whose name starts with prefix and the
// exact version it is pinned to: what a metapackage such as linux-image-cloud-amd64 stands for
// ("linux-image-6.1.0-48-cloud-amd64 (= 6.1.172-1)").
func pinnedDependency(record map[string]string, prefix string) (name, version string, err error) {
	for _, dep := range strings.Split(record["Depends"], ",") {
		f := strings.Fields(strings.NewReplacer("(", " ", ")", " ").Replace(dep))
		if len(f) == 3 && strings.HasPrefix(f[0], prefix) && f[1] == "=" {
			return f[0], f[2], nil
		}
	}
	return "", "", fmt.Errorf("%s depends on no %s* package of an exact version (Depends: %s)",
		record["Package"], prefix, record["Depends"])
}
