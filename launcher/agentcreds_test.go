package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestParseAgentKeys(t *testing.T) {
	got, err := ParseAgentKeys("/var/run/kubevirt-secrets/secret-1:root,debian")
	if err != nil || got.Dir != "/var/run/kubevirt-secrets/secret-1" || !slices.Equal(got.Users, []string{"root", "debian"}) {
		t.Errorf("ParseAgentKeys = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "/dir", "/dir:", ":root"} {
		if _, err := ParseAgentKeys(bad); err == nil {
			t.Errorf("ParseAgentKeys(%q) took it", bad)
		}
	}
}

// secretMount writes files as the kubelet mounts a Secret: each key a symlink into ..data.
func secretMount(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadKeys(t *testing.T) {
	dir := secretMount(t, map[string]string{"b": "ssh-ed25519 BBB b@x\n", "a": "# a comment\nssh-rsa AAA a@x\n\n  ssh-ed25519 CCC c@x  \n"})
	got, err := readKeys(dir)
	if want := []string{"ssh-rsa AAA a@x", "ssh-ed25519 CCC c@x", "ssh-ed25519 BBB b@x"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("readKeys = %q, %v; want %q", got, err, want)
	}
}

// recorder is a guest whose agent fails the first fails calls, then takes the keys.
type recorder struct {
	mu    sync.Mutex
	fails int
	sets  map[string][][]string
}

func (r *recorder) set(user string, keys []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fails > 0 {
		r.fails--
		return errors.New("Guest agent is not responding")
	}
	r.sets[user] = append(r.sets[user], keys)
	return nil
}

func (r *recorder) count(user string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sets[user])
}

func TestPropagateKeysSetsEachUsersKeysOnceTheAgentAnswers(t *testing.T) {
	keys := secretMount(t, map[string]string{"key": "ssh-ed25519 AAA me@x\n"})
	empty := secretMount(t, nil)
	r := &recorder{fails: 1, sets: map[string][][]string{}}
	propagateUntil(t, keyCredentials([]AgentKeys{{Dir: keys, Users: []string{"root", "debian"}}, {Dir: empty, Users: []string{"nobody"}}}, r.set),
		func() bool { return r.count("root") > 0 && r.count("debian") > 0 })
	// The first call fails (debian's, in name order); root's passes at once, debian's at the next poll.
	if r.count("root") != 1 || r.count("debian") != 1 || !slices.Equal(r.sets["root"][0], []string{"ssh-ed25519 AAA me@x"}) {
		t.Errorf("sets = %q", r.sets)
	}
	if r.count("nobody") != 0 {
		t.Errorf("a Secret without keys wiped nobody's keys: %q", r.sets["nobody"])
	}
}

func TestPropagatePasswordsSetsEachUsersPassword(t *testing.T) {
	pws := secretMount(t, map[string]string{"root": "s3cret\n", "fedora": "pass word", "bad": "two\nlines", "empty": ""})
	r := &recorder{sets: map[string][][]string{}}
	creds := passwordCredentials([]string{pws, filepath.Join(t.TempDir(), "missing")}, func(user, pw string) error { return r.set(user, []string{pw}) })
	propagateUntil(t, creds, func() bool { return r.count("root") > 0 && r.count("fedora") > 0 })
	if got := r.sets; len(got) != 2 || got["root"][0][0] != "s3cret" || got["fedora"][0][0] != "pass word" {
		t.Errorf("sets = %q; want root's (its final newline dropped) and fedora's, not the one with a line break or the empty one", got)
	}
}

// propagateUntil runs propagateCredentials, polling fast, until done says so (5 s at most).
func propagateUntil(t *testing.T, creds []agentCredential, done func() bool) {
	t.Helper()
	agentCredsPoll = 50 * time.Millisecond
	defer func() { agentCredsPoll = 10 * time.Second }()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		propagateCredentials(ctx, creds)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !done() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-stopped
}
