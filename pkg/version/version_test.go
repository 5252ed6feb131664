package version

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Version: "v0.0.0-20261125141347-3f02c8d412ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3f02c8d412ab43025caf6696bf1ab756dde87798"},
			{Key: "vcs.time", Value: "2026-11-25T14:13:47Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	stamped := Info{GitVersion: "v1.2.3", GitCommit: "abc", GitTreeState: "clean", BuildDate: "2026-01-01T00:00:00Z"}
	for _, tc := range []struct {
		name    string
		stamped Info
		bi      *debug.BuildInfo
		want    Info
	}{
		{"ldflags win", stamped, vcs, stamped},
		{"build info fills the gaps", Info{}, vcs, Info{GitVersion: vcs.Main.Version, GitCommit: "3f02c8d412ab43025caf6696bf1ab756dde87798",
			GitTreeState: "dirty", BuildDate: "2026-11-25T14:13:47Z"}},
		{"partial stamp", Info{GitVersion: "v1.2.3"}, vcs, Info{GitVersion: "v1.2.3", GitCommit: "3f02c8d412ab43025caf6696bf1ab756dde87798",
			GitTreeState: "dirty", BuildDate: "2026-11-25T14:13:47Z"}},
		{"nothing recorded", Info{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Info{GitVersion: unknownVersion}},
		{"no build info", Info{}, nil, Info{GitVersion: unknownVersion}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.stamped, tc.bi)
			if got.GoVersion != runtime.Version() || got.Compiler != runtime.Compiler || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
				t.Errorf("toolchain fields %+v", got)
			}
			got.GoVersion, got.Compiler, got.Platform = "", "", ""
			if got != tc.want {
				t.Errorf("resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestInfoIsKubeVirtShaped: the JSON names are the ones KubeVirt's virtctl decodes.
func TestInfoIsKubeVirtShaped(t *testing.T) {
	raw, err := json.Marshal(Get())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} {
		if !strings.Contains(string(raw), `"`+key+`":`) {
			t.Errorf("%s has no %s", raw, key)
		}
	}
}
