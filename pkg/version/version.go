// Package version is the build's version as every binary reports it: virt-api serves it at
// GET /apis/subresources.kubevirt.io/v1/version and virtctl prints it, both in KubeVirt's
// shape. `make build` stamps it with -ldflags (hack/version-ldflags.sh); a plain `go build`
// falls back to what Go recorded of the module and the checkout, when it recorded anything.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped with -ldflags "-X github.com/vmctl/vmctl/pkg/version.gitVersion=..." and so on.
var (
	gitVersion   string
	gitCommit    string
	gitTreeState string
	buildDate    string
)

// Info is KubeVirt's version document (kubevirt.io/client-go/version.Info): the JSON of
// virt-api's version endpoint, which KubeVirt's own virtctl reads.
type Info struct {
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// Get is this binary's version.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Info{GitVersion: gitVersion, GitCommit: gitCommit, GitTreeState: gitTreeState, BuildDate: buildDate}, bi)
}

// unknownVersion is what a build that recorded nothing reports (GOFLAGS=-buildvcs=false and
// no -ldflags): semver-shaped, so clients comparing versions do not fail on it.
const unknownVersion = "v0.0.0-devel"

// resolve fills what the stamp left empty from Go's build information (nil when the binary
// has none), and the toolchain fields from the running binary.
func resolve(stamped Info, bi *debug.BuildInfo) Info {
	out := stamped
	settings := map[string]string{}
	if bi != nil {
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		// Go 1.24 on stamps the main module with a pseudo-version from the checkout.
		if out.GitVersion == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			out.GitVersion = bi.Main.Version
		}
	}
	if out.GitVersion == "" {
		out.GitVersion = unknownVersion
	}
	if out.GitCommit == "" {
		out.GitCommit = settings["vcs.revision"]
	}
	if out.BuildDate == "" {
		out.BuildDate = settings["vcs.time"]
	}
	if out.GitTreeState == "" {
		switch settings["vcs.modified"] {
		case "true":
			out.GitTreeState = "dirty"
		case "false":
			out.GitTreeState = "clean"
		}
	}
	out.GoVersion = runtime.Version()
	out.Compiler = runtime.Compiler
	out.Platform = fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH)
	return out
}
