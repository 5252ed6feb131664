package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// The Dockerfile at the repository root builds the component images for those who use
// Docker or a registry build pipeline. These tests build the same images with the image
// builder, offline: fake binaries in _out/bin, and a fake launcher base in a temporary cache.
// Then they check that each image's Dockerfile target has the same entrypoint, user,
// binaries, files and packages. The components are the binaries `make build` builds (the
// Makefile's BINARIES): the image builder makes an image of each from _out/bin.

const fakeBinaryPrefix = "fake binary "

// dfStage is one FROM ... AS name of the Dockerfile and its instructions.
type dfStage struct {
	name, base string
	line       int
	nodes      []*parser.Node
}

func repoPath(elem ...string) string {
	return filepath.Join(append([]string{"..", ".."}, elem...)...)
}

func parseDockerfile(t *testing.T) []*dfStage {
	t.Helper()
	f, err := os.Open(repoPath("Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	var stages []*dfStage
	for _, n := range res.AST.Children {
		if inst(n) == "from" {
			args := nodeArgs(n)
			s := &dfStage{line: n.StartLine}
			if len(args) > 0 {
				s.base = args[0]
			}
			if len(args) == 3 && strings.EqualFold(args[1], "as") {
				s.name = strings.ToLower(args[2])
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if inst(n) != "arg" {
				t.Fatalf("Dockerfile line %d: %s before the first FROM", n.StartLine, n.Value)
			}
			continue
		}
		stages[len(stages)-1].nodes = append(stages[len(stages)-1].nodes, n)
	}
	return stages
}

// inst is an instruction's name, in lower case.
func inst(n *parser.Node) string { return strings.ToLower(n.Value) }

// nodeArgs are an instruction's arguments.
func nodeArgs(n *parser.Node) []string {
	var args []string
	for a := n.Next; a != nil; a = a.Next {
		args = append(args, a.Value)
	}
	return args
}

// flag returns the value of an instruction's --name=value flag.
func flag(n *parser.Node, name string) (string, bool) {
	for _, f := range n.Flags {
		if v, ok := strings.CutPrefix(f, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func stageNamed(stages []*dfStage, name string) *dfStage {
	for _, s := range stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// chain is the stage and the stages it is built FROM, nearest first.
func chain(stages []*dfStage, s *dfStage) []*dfStage {
	out := []*dfStage{s}
	for {
		parent := stageNamed(stages, s.base)
		if parent == nil || slices.Contains(out, parent) {
			return out
		}
		out = append(out, parent)
		s = parent
	}
}

// last is the arguments of the last instruction called name in the stage or the stages it
// is built from, and whether it is in exec (JSON) form.
func last(stages []*dfStage, s *dfStage, name string) ([]string, bool, bool) {
	for _, st := range chain(stages, s) {
		for i := len(st.nodes) - 1; i >= 0; i-- {
			if n := st.nodes[i]; inst(n) == name {
				return nodeArgs(n), n.Attributes["json"], true
			}
		}
	}
	return nil, false, false
}

// dfCopy is one source of a COPY and where it lands.
type dfCopy struct {
	from, src, dest string
	line            int
}

// copies lists the COPY and ADD sources of the stage and the stages it is built from.
func copies(stages []*dfStage, s *dfStage) []dfCopy {
	var out []dfCopy
	for _, st := range chain(stages, s) {
		workdir := "/"
		for _, n := range st.nodes {
			args := nodeArgs(n)
			switch {
			case inst(n) == "workdir" && len(args) == 1:
				workdir = path.Join(workdir, args[0])
			case (inst(n) == "copy" || inst(n) == "add") && len(args) >= 2:
				from, _ := flag(n, "from")
				srcs, dest := args[:len(args)-1], args[len(args)-1]
				intoDir := strings.HasSuffix(dest, "/") || dest == "." || len(srcs) > 1
				if !path.IsAbs(dest) {
					dest = path.Join(workdir, dest)
				}
				for _, src := range srcs {
					d := dest
					if intoDir {
						d = path.Join(dest, path.Base(src))
					}
					out = append(out, dfCopy{from: from, src: src, dest: d, line: n.StartLine})
				}
			}
		}
	}
	return out
}

// runs is the text of the stage's RUN instructions.
func runs(s *dfStage) []string {
	var out []string
	for _, n := range s.nodes {
		if inst(n) == "run" {
			out = append(out, strings.Join(nodeArgs(n), " "))
		}
	}
	return out
}

// shellCommands splits a RUN's shell text into its commands, roughly: at ;, &&, || and line
// ends. Good enough to tell which command does what in this Dockerfile.
func shellCommands(run string) []string {
	return strings.FieldsFunc(strings.NewReplacer("&&", ";", "||", ";", "\n", ";").Replace(run),
		func(r rune) bool { return r == ';' })
}

// makeBinaries is the Makefile's BINARIES: what `make build` puts in _out/bin.
func makeBinaries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(repoPath("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "BINARIES :="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatal("Makefile has no BINARIES := line")
	return nil
}

// fakeBase is a launcher base with what the image builder reads from it.
func fakeBase() map[string]string {
	base := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for _, p := range launcherBaseMustHave {
		base[p] = "fake base file " + p + "\n"
	}
	return base
}

func writeTarGz(t *testing.T, file string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// builtImage is a component image as the image builder makes it from fake inputs.
type builtImage struct {
	config v1.Config
	// files are the regular files of the image, flattened, by absolute path.
	files map[string]string
	// onLauncherBase says the image is built on the launcher base (launcher/packages).
	onLauncherBase bool
}

// buildComponents builds every component image with the image builder, offline.
func buildComponents(t *testing.T, binaries []string) map[string]builtImage {
	t.Helper()
	// Nothing here may run a program: with no PATH, a builder that would (debootstrap for a
	// launcher base it does not find, go build) fails instead.
	t.Setenv("PATH", "")
	root, cache := t.TempDir(), t.TempDir()
	launcherDir, err := filepath.Abs(repoPath(launcherImageDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(launcherImageDir)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(launcherDir, filepath.Join(root, launcherImageDir)); err != nil {
		t.Fatal(err)
	}
	for _, bin := range binaries {
		p := filepath.Join(root, "_out", "bin", bin)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fakeBinaryPrefix+bin+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key, err := contentKey(filepath.Join(launcherDir, rootfsScript), filepath.Join(launcherDir, rootfsPackageList))
	if err != nil {
		t.Fatal(err)
	}
	basePath := filepath.Join(cache, "launcher-rootfs", "bookworm-"+key+".tar.gz")
	writeTarGz(t, basePath, fakeBase())
	layer, err := tarball.LayerFromFile(basePath)
	if err != nil {
		t.Fatal(err)
	}
	baseLayer, err := layer.Digest()
	if err != nil {
		t.Fatal(err)
	}

	b := &Builder{Root: root, Cache: cache, Tag: "test"}
	out := map[string]builtImage{}
	for _, bin := range binaries {
		build, ok := targets[bin]
		if !ok {
			t.Errorf("make build makes %s, but the image builder has no target for it", bin)
			continue
		}
		img, err := build(b)
		if err != nil {
			t.Fatalf("image builder, %s: %v", bin, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		files, err := imageFiles(img)
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		on := false
		for _, l := range layers {
			if d, err := l.Digest(); err == nil && d == baseLayer {
				on = true
			}
		}
		out[bin] = builtImage{config: cf.Config, files: files, onLauncherBase: on}
	}
	return out
}

// imageFiles reads an image's flattened regular files.
func imageFiles(img v1.Image) (map[string]string, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[path.Join("/", hdr.Name)] = string(data)
	}
}

func TestDockerfileBuildsTheComponentImages(t *testing.T) {
	stages := parseDockerfile(t)
	binaries := makeBinaries(t)
	images := buildComponents(t, binaries)
	base := fakeBase()

	for _, bin := range binaries {
		img, ok := images[bin]
		if !ok {
			continue
		}
		s := stageNamed(stages, bin)
		if s == nil {
			t.Errorf("Dockerfile has no target for the %s image (FROM ... AS %s)", bin, bin)
			continue
		}
		where := fmt.Sprintf("Dockerfile target %s (line %d)", bin, s.line)

		entrypoint, json, _ := last(stages, s, "entrypoint")
		if !json || !slices.Equal(entrypoint, img.config.Entrypoint) {
			t.Errorf("%s: ENTRYPOINT %q (exec form %v), the image builder's is %q", where, entrypoint, json, img.config.Entrypoint)
		}
		user, _, _ := last(stages, s, "user")
		if want := img.config.User; strings.Join(user, " ") != want {
			t.Errorf("%s: USER %q, the image builder's is %q", where, user, want)
		}
		if ch := chain(stages, s); ch[len(ch)-1].base == "scratch" {
			// On an empty base the environment is the Dockerfile's alone; a Debian base
			// image sets the same PATH as the image builder.
			var env []string
			for _, st := range slices.Backward(ch) {
				for _, n := range st.nodes {
					if a := nodeArgs(n); inst(n) == "env" {
						for i := 0; i+1 < len(a); i += 3 {
							env = append(env, a[i]+"="+a[i+1])
						}
					}
				}
			}
			if !slices.Equal(env, img.config.Env) {
				t.Errorf("%s: environment %q, the image builder's is %q", where, env, img.config.Env)
			}
		}

		// Each file the image builder puts in the image, the target puts there too: a binary
		// from the build stage, a file of the repository, or lines added to a base file.
		cps := copies(stages, s)
		var commands []string
		for _, st := range chain(stages, s) {
			for _, r := range runs(st) {
				commands = append(commands, shellCommands(r)...)
			}
		}
		for p, content := range img.files {
			rel := strings.TrimPrefix(p, "/")
			if img.onLauncherBase && base[rel] == content {
				continue
			}
			i := slices.IndexFunc(cps, func(c dfCopy) bool { return c.dest == p })
			switch {
			case i >= 0 && cps[i].from != "":
				c := cps[i]
				name, isBin := strings.CutPrefix(strings.TrimSpace(content), fakeBinaryPrefix)
				if !isBin || path.Base(c.src) != name {
					t.Errorf("%s: line %d copies %s from %s to %s, the image builder puts another file there", where, c.line, c.src, c.from, p)
					continue
				}
				checkBuildStage(t, stages, c, name)
			case i >= 0:
				c := cps[i]
				data, err := os.ReadFile(repoPath(filepath.FromSlash(c.src)))
				if err != nil {
					t.Errorf("%s: line %d: %v", where, c.line, err)
				} else if string(data) != content {
					t.Errorf("%s: line %d copies %s to %s, the image builder puts another content there", where, c.line, c.src, p)
				}
			case img.onLauncherBase && base[rel] != "":
				for _, line := range strings.Split(content, "\n") {
					if line == "" || strings.Contains(base[rel], line+"\n") {
						continue
					}
					if !slices.ContainsFunc(commands, func(c string) bool {
						return strings.Contains(c, line) && strings.Contains(c, ">>"+p)
					}) {
						t.Errorf("%s: the image builder adds %q to %s; no RUN of the target does (... >>%s)", where, line, p, p)
					}
				}
			default:
				t.Errorf("%s: the image builder puts %s in the image; the target does not", where, p)
			}
		}

		if img.onLauncherBase {
			checkPackages(t, where, s, cps)
		}
	}
}

// checkBuildStage checks that the stage a binary is copied from builds it as `make build`
// does, from the package of cmd/ of its name.
func checkBuildStage(t *testing.T, stages []*dfStage, c dfCopy, name string) {
	t.Helper()
	from := stageNamed(stages, c.from)
	if from == nil {
		t.Errorf("Dockerfile line %d copies from %q, which is no stage of the Dockerfile", c.line, c.from)
		return
	}
	for _, r := range runs(from) {
		if strings.Contains(r, "go build") && strings.Contains(r, "-o "+path.Dir(c.src)+"/") &&
			strings.Contains(r, "CGO_ENABLED=0") && strings.Contains(r, "-trimpath") &&
			(strings.Contains(r, "./cmd/"+name+" ") || strings.HasSuffix(r, "./cmd/"+name) || strings.Contains(r, "./cmd/...")) {
			return
		}
	}
	t.Errorf("Dockerfile stage %s builds no %s into %s as make build does (CGO_ENABLED=0 go build -trimpath -o %s/ ./cmd/%s)",
		c.from, c.src, path.Dir(c.src), path.Dir(c.src), name)
}

// checkPackages checks that a target on the launcher base installs every package of
// launcher/packages: by name, or from a copy of that file.
func checkPackages(t *testing.T, where string, s *dfStage, cps []dfCopy) {
	t.Helper()
	list := path.Join(filepath.ToSlash(launcherImageDir), rootfsPackageList)
	data, err := os.ReadFile(repoPath(list))
	if err != nil {
		t.Fatal(err)
	}
	var installs []string
	for _, r := range runs(s) {
		for _, c := range shellCommands(r) {
			if strings.Contains(c, "apt-get") && strings.Contains(c, " install ") {
				installs = append(installs, c)
			}
		}
	}
	if len(installs) == 0 {
		t.Errorf("%s: no RUN apt-get install", where)
		return
	}
	for _, c := range cps {
		if c.from == "" && c.src == list {
			for _, r := range installs {
				if strings.Contains(r, c.dest) {
					return // it installs the list itself
				}
			}
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		pkg := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if pkg == "" {
			continue
		}
		found := false
		for _, r := range installs {
			found = found || slices.Contains(strings.Fields(r), pkg)
		}
		if !found {
			t.Errorf("%s: does not install %s (%s)", where, pkg, list)
		}
	}
}

// Every file a COPY or ADD takes from the build context is in the repository and not left out
// of the context by .dockerignore.
func TestDockerfileCopySourcesExist(t *testing.T) {
	stages := parseDockerfile(t)
	ignoreData, err := os.ReadFile(repoPath(".dockerignore"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ignored []string
	for _, line := range strings.Split(string(ignoreData), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ignored = append(ignored, strings.Trim(path.Clean(line), "/"))
		}
	}
	n := 0
	for _, s := range stages {
		for _, node := range s.nodes {
			if inst(node) != "copy" && inst(node) != "add" {
				continue
			}
			if from, ok := flag(node, "from"); ok {
				if stageNamed(stages, from) == nil {
					t.Errorf("Dockerfile line %d: COPY --from=%s: no such stage", node.StartLine, from)
				}
				continue
			}
			args := nodeArgs(node)
			for _, src := range args[:len(args)-1] {
				n++
				matches, err := filepath.Glob(repoPath(filepath.FromSlash(src)))
				if err != nil || len(matches) == 0 {
					t.Errorf("Dockerfile line %d: COPY source %s is not in the repository", node.StartLine, src)
				}
				clean := strings.Trim(path.Clean(src), "/")
				for _, ig := range ignored {
					if clean == ig || strings.HasPrefix(clean, ig+"/") {
						t.Errorf("Dockerfile line %d: COPY source %s is left out of the build context by .dockerignore (%s)", node.StartLine, src, ig)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("Dockerfile copies nothing from the build context")
	}
}

// The Go image that builds the binaries is at least the Go version go.mod asks for.
func TestDockerfileGoVersion(t *testing.T) {
	gomod, err := os.ReadFile(repoPath("go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, line := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			want = strings.TrimSpace(v)
		}
	}
	n := 0
	for _, s := range parseDockerfile(t) {
		image, tag, ok := strings.Cut(s.base, ":")
		if !ok || (image != "golang" && !strings.HasSuffix(image, "/golang")) {
			continue
		}
		n++
		version, _, _ := strings.Cut(tag, "-")
		if !versionAtLeast(version, want) {
			t.Errorf("Dockerfile line %d: %s is older than go.mod's go %s", s.line, s.base, want)
		}
	}
	if n == 0 {
		t.Fatal("no stage of the Dockerfile is FROM golang")
	}
}

// versionAtLeast compares the major.minor of two Go versions ("1.26", "1.26.0").
func versionAtLeast(have, want string) bool {
	num := func(v string) [2]int {
		var out [2]int
		for i, p := range strings.SplitN(v, ".", 3) {
			if i < 2 {
				out[i], _ = strconv.Atoi(p)
			}
		}
		return out
	}
	h, w := num(have), num(want)
	return h[0] > w[0] || (h[0] == w[0] && h[1] >= w[1])
}
