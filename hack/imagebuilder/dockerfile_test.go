package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// The Dockerfile at the repository root builds, for users of Docker or a registry build
// pipeline, the component images `make images` builds. These tests read it with buildkit's
// own parser and hold it to the image builder: a target per component image with the same
// entrypoint and user, COPY sources that exist in the build context, and for the launcher
// the same package list, libvirt configuration, qemu account and environment.

// instruction is one instruction's name (lower case), flags and arguments.
type instruction struct {
	name  string
	flags []string
	args  []string
	line  int
}

// dockerfileStages maps each stage's name to its instructions.
func dockerfileStages(t *testing.T) map[string][]instruction {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	stages := map[string][]instruction{}
	current := ""
	for _, n := range res.AST.Children {
		in := instruction{name: strings.ToLower(n.Value), flags: n.Flags, line: n.StartLine}
		for a := n.Next; a != nil; a = a.Next {
			in.args = append(in.args, a.Value)
		}
		if in.name == "from" {
			if len(in.args) != 3 || !strings.EqualFold(in.args[1], "as") {
				t.Fatalf("Dockerfile line %d: every FROM names its stage (FROM image AS name)", in.line)
			}
			current = in.args[2]
			stages[current] = nil
			continue
		}
		stages[current] = append(stages[current], in)
	}
	return stages
}

func hasStage(stages map[string][]instruction, name string) bool {
	_, ok := stages[name]
	return ok
}

// last is the arguments of the stage's last instruction called name.
func last(stage []instruction, name string) []string {
	var args []string
	for _, in := range stage {
		if in.name == name {
			args = in.args
		}
	}
	return args
}

func TestDockerfileHasATargetPerComponentImage(t *testing.T) {
	stages := dockerfileStages(t)
	want := map[string][2]string{
		"virt-launcher": {strings.Join(launcherConfig.Entrypoint, " "), launcherConfig.User},
		"virtiofsd":     {virtiofsdEntrypoint, virtiofsdUser},
	}
	for name, user := range staticComponents {
		want[name] = [2]string{"/usr/bin/" + name, user}
	}
	for name, w := range want {
		stage, ok := stages[name]
		if !ok {
			t.Errorf("Dockerfile has no target %s (FROM ... AS %s)", name, name)
			continue
		}
		if got := strings.Join(last(stage, "entrypoint"), " "); got != w[0] {
			t.Errorf("Dockerfile target %s: ENTRYPOINT %q, make images gives %q", name, got, w[0])
		}
		if got := strings.Join(last(stage, "user"), " "); got != w[1] {
			t.Errorf("Dockerfile target %s: USER %q, make images gives %q", name, got, w[1])
		}
	}
}

func TestDockerfileCopiesExist(t *testing.T) {
	stages := dockerfileStages(t)
	ignored, err := os.ReadFile(filepath.Join("..", "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for name, stage := range stages {
		for _, in := range stage {
			if in.name != "copy" && in.name != "add" {
				continue
			}
			if i := slices.IndexFunc(in.flags, func(f string) bool { return strings.HasPrefix(f, "--from=") }); i >= 0 {
				if from := strings.TrimPrefix(in.flags[i], "--from="); !hasStage(stages, from) {
					t.Errorf("Dockerfile line %d copies from %q, which is no stage", in.line, from)
				}
				continue
			}
			for _, src := range in.args[:len(in.args)-1] {
				if _, err := os.Stat(filepath.Join("..", "..", src)); err != nil {
					t.Errorf("Dockerfile line %d (stage %s): COPY source %s: %v", in.line, name, src, err)
				}
				for _, line := range strings.Split(string(ignored), "\n") {
					if line != "" && !strings.HasPrefix(line, "#") && src != "." && strings.HasPrefix(src, line) {
						t.Errorf("Dockerfile line %d copies %s, which .dockerignore leaves out of the context", in.line, src)
					}
				}
			}
		}
	}
}

func TestDockerfileLauncherMatchesMakeImages(t *testing.T) {
	stage := dockerfileStages(t)["virt-launcher"]
	var sources, runs, env []string
	for _, in := range stage {
		switch in.name {
		case "copy":
			sources = append(sources, in.args[:len(in.args)-1]...)
		case "run":
			runs = append(runs, strings.Join(in.args, " "))
		case "env":
			// The parser gives name, value, separator for each pair.
			for i := 0; i+1 < len(in.args); i += 3 {
				env = append(env, in.args[i]+"="+in.args[i+1])
			}
		}
	}
	for _, kv := range launcherConfig.Env[1:] {
		if !slices.Contains(env, kv) {
			t.Errorf("the virt-launcher target does not set ENV %s, which make images sets (got %q)", kv, env)
		}
	}
	for _, name := range append([]string{"packages"}, launcherConfigFiles...) {
		if src := launcherImageDir + "/" + name; !slices.Contains(sources, src) {
			t.Errorf("the virt-launcher target does not COPY %s, which make images uses", src)
		}
	}
	run := strings.Join(runs, "\n")
	if !strings.Contains(run, "apt-get install") || !strings.Contains(run, "launcher-packages") {
		t.Errorf("the virt-launcher target does not apt-get install the packages file:\n%s", run)
	}
	for _, entry := range []string{qemuUser, qemuGroup} {
		if !strings.Contains(run, entry) {
			t.Errorf("the virt-launcher target does not add %q, which make images adds", entry)
		}
	}
}
