package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// build-rootfs.sh takes its Debian mirrors from debian-mirror.sh. These tests run that file's
// debian_mirror in bash against apt sources written here, found the way apt finds them
// (APT_CONFIG naming Dir::Etc::sourcelist and Dir::Etc::sourceparts).

// mirrorSources writes an apt configuration with the given files (names relative to a fake
// /etc/apt: "sources.list", "sources.list.d/x.sources") and returns its APT_CONFIG file.
func mirrorSources(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sources.list.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "apt.conf")
	cfg := "Dir::Etc::sourcelist \"" + filepath.Join(dir, "sources.list") + "\";\n" +
		"Dir::Etc::sourceparts \"" + filepath.Join(dir, "sources.list.d") + "\";\n"
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// debianMirror runs debian_mirror VARIABLE SUITE DEFAULT with APT_CONFIG=aptConfig and the
// extra environment env; it returns the printed mirror and the log.
func debianMirror(t *testing.T, aptConfig string, env []string, variable, suite, def string) (string, string) {
	t.Helper()
	for _, tool := range []string{"bash", "apt-get"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on this machine", tool)
		}
	}
	lib := filepath.Join("..", "..", launcherImageDir, "debian-mirror.sh")
	cmd := exec.Command("bash", "-c", `set -euo pipefail
log() { echo "$*" >&2; }
source "$1"
debian_mirror "$2" "$3" "$4"`, "bash", lib, variable, suite, def)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DEBIAN_MIRROR=") && !strings.HasPrefix(kv, "DEBIAN_SECURITY_MIRROR=") &&
			!strings.HasPrefix(kv, "APT_CONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "APT_CONFIG="+aptConfig)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("debian_mirror %s %s: %v\n%s", variable, suite, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), stderr.String()
}

func TestDebianMirrorFromAptSources(t *testing.T) {
	conf := mirrorSources(t, map[string]string{
		// One-line format, read first. Commented entries, deb-src and other components don't count.
		"sources.list": `# deb http://commented.example/debian bookworm main
deb-src http://source.example/debian bookworm main
deb http://contrib-only.example/debian bookworm contrib
deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://list.example/debian/ bookworm main contrib # trailing comment
`,
		// Disabled stanzas, files apt does not read, and non-http URIs are skipped.
		"sources.list.d/00-off.sources": `Types: deb
URIs: http://off.example/debian-security
Suites: bookworm-security
Components: main
Enabled: no
`,
		"sources.list.d/05-old.list.disabled": "deb http://disabled.example/debian-security bookworm-security main\n",
		"sources.list.d/10-mirror.sources": `Types: deb
URIs: file:/srv/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
# a comment between fields
URIs: https://security.example/debian-security/
Suites: bookworm-security
  trixie-security
Components: main contrib
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 xyz
 -----END PGP PUBLIC KEY BLOCK-----
`,
	})

	got, log := debianMirror(t, conf, nil, "DEBIAN_MIRROR", "bookworm", "http://default.example/debian")
	if got != "http://list.example/debian" {
		t.Errorf("bookworm mirror %q, want the sources.list entry with its slash trimmed\n%s", got, log)
	}
	got, log = debianMirror(t, conf, nil, "DEBIAN_SECURITY_MIRROR", "bookworm-security", "http://default.example/debian-security")
	if got != "https://security.example/debian-security" {
		t.Errorf("bookworm-security mirror %q, want the enabled https deb822 entry\n%s", got, log)
	}
	got, log = debianMirror(t, conf, nil, "DEBIAN_MIRROR", "trixie-security", "http://default.example/debian")
	if got != "https://security.example/debian-security" {
		t.Errorf("a continuation line's suite: got %q\n%s", got, log)
	}
}

func TestDebianMirrorVariableWins(t *testing.T) {
	conf := mirrorSources(t, map[string]string{"sources.list": "deb http://list.example/debian bookworm main\n"})
	got, log := debianMirror(t, conf, []string{"DEBIAN_MIRROR=http://override.example/debian/"},
		"DEBIAN_MIRROR", "bookworm", "http://default.example/debian")
	if got != "http://override.example/debian" || !strings.Contains(log, "$DEBIAN_MIRROR") {
		t.Errorf("got %q, log:\n%s", got, log)
	}
}

func TestDebianMirrorDefault(t *testing.T) {
	conf := mirrorSources(t, map[string]string{
		"sources.list.d/other.sources": "Types: deb\nURIs: http://other.example/repo\nSuites: stable\nComponents: main\n",
	})
	got, log := debianMirror(t, conf, nil, "DEBIAN_SECURITY_MIRROR", "bookworm-security", "http://default.example/debian-security")
	if got != "http://default.example/debian-security" || !strings.Contains(log, "default") {
		t.Errorf("got %q, log:\n%s", got, log)
	}
}
