package virtctl

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testSSHServer is an in-process ssh server: it lets in the one user key it was given and
// runs exec requests with sh -c in dir, as a guest's sshd would (so `scp -t` and `scp -f`
// are the system's scp).
type testSSHServer struct {
	addr string
	wg   sync.WaitGroup
}

func startSSHServer(t *testing.T, hostKey ssh.Signer, userKey ssh.PublicKey, dir string) *testSSHServer {
	t.Helper()
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if string(key.Marshal()) == string(userKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(hostKey)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testSSHServer{addr: l.Addr().String()}
	t.Cleanup(func() { l.Close(); s.wg.Wait() })
	s.wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { serveSSH(conn, cfg, dir) })
		}
	})
	return s
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, dir string) {
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range requests {
				if req.Type != "exec" {
					_ = req.Reply(false, nil)
					continue
				}
				var payload struct{ Command string }
				if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
					_ = req.Reply(false, nil)
					continue
				}
				_ = req.Reply(true, nil)
				cmd := exec.Command("sh", "-c", payload.Command)
				cmd.Dir = dir
				cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
				// Not cmd.Stdin = ch: Wait would wait for the client to close its side, and
				// sshd ends the session when the command exits.
				stdin, err := cmd.StdinPipe()
				if err != nil {
					return
				}
				go func() { _, _ = io.Copy(stdin, ch); _ = stdin.Close() }()
				status := uint32(0)
				if err := cmd.Run(); err != nil {
					status = 255
					var exit *exec.ExitError
					if errors.As(err, &exit) {
						status = uint32(exit.ExitCode())
					}
				}
				_ = ch.CloseWrite()
				b := make([]byte, 4)
				binary.BigEndian.PutUint32(b, status)
				_, _ = ch.SendRequest("exit-status", false, b)
				return
			}
		}()
	}
}

// dial connects to the server as alias: the transport is a plain TCP connection where virtctl
// has a port-forward stream.
func (s *testSSHServer) dial(t *testing.T, userKey ssh.Signer, kh knownHostsFile) (*ssh.Client, error) {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	return newSSHClient(conn, "vmi/web.ns", 22, "fedora", []ssh.AuthMethod{ssh.PublicKeys(userKey)}, kh.callback())
}

func TestSSHRunsCommandsAndPassesTheExitStatus(t *testing.T) {
	hostKey, userKey := newSigner(t), newSigner(t)
	srv := startSSHServer(t, hostKey, userKey.PublicKey(), t.TempDir())
	kh := knownHostsFile{path: filepath.Join(t.TempDir(), "known_hosts"), warn: io.Discard}
	client, err := srv.dial(t, userKey, kh)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var out, errOut strings.Builder
	err = runSession(client, "read line; echo got $line; echo oops >&2; exit 3", strings.NewReader("hello\n"), &out, &errOut)
	var exit *ssh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 3 {
		t.Errorf("err %v, want exit status 3", err)
	}
	if out.String() != "got hello\n" || errOut.String() != "oops\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

func TestSSHRefusesAnUnknownUserKey(t *testing.T) {
	srv := startSSHServer(t, newSigner(t), newSigner(t).PublicKey(), t.TempDir())
	kh := knownHostsFile{path: filepath.Join(t.TempDir(), "known_hosts"), warn: io.Discard}
	if _, err := srv.dial(t, newSigner(t), kh); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("err %v, want an authentication failure", err)
	}
}

// TestKnownHostsTrustOnFirstUse: the first key of a guest is added, the same key passes again
// without a new line, and another key for the same guest is refused naming the line.
func TestKnownHostsTrustOnFirstUse(t *testing.T) {
	hostKey, userKey := newSigner(t), newSigner(t)
	path := filepath.Join(t.TempDir(), "ssh", "kubevirt_known_hosts") // the directory is made too
	var warn strings.Builder
	kh := knownHostsFile{path: path, warn: &warn}
	srv := startSSHServer(t, hostKey, userKey.PublicKey(), t.TempDir())

	for i := range 2 {
		client, err := srv.dial(t, userKey, kh)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		client.Close()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "vmi/web.ns ssh-ed25519 ") {
		t.Fatalf("known hosts %q, want one line for vmi/web.ns", data)
	}
	if strings.Count(warn.String(), "permanently added") != 1 {
		t.Errorf("warnings %q, want one", warn.String())
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("known hosts mode %v, %v", st.Mode(), err)
	}

	// The guest now shows another key: refused, and the file is left alone.
	impostor := startSSHServer(t, newSigner(t), userKey.PublicKey(), t.TempDir())
	_, err = impostor.dial(t, userKey, kh)
	if err == nil || !strings.Contains(err.Error(), "CHANGED") || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err %v, want a changed host key refusal", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("known hosts changed to %q", after)
	}
}

func TestKnownHostsKeepsPortsApart(t *testing.T) {
	kh := knownHostsFile{path: filepath.Join(t.TempDir(), "known_hosts"), warn: io.Discard}
	a, b := newSigner(t).PublicKey(), newSigner(t).PublicKey()
	if err := kh.callback()("vmi/web.ns:22", nil, a); err != nil {
		t.Fatal(err)
	}
	if err := kh.callback()("vmi/web.ns:2222", nil, b); err != nil {
		t.Fatalf("another port is another host: %v", err)
	}
	if err := kh.callback()("vmi/web.ns:2222", nil, a); err == nil {
		t.Fatal("want the port 22 key refused on port 2222")
	}
	data, _ := os.ReadFile(kh.path)
	if !strings.Contains(string(data), "[vmi/web.ns]:2222 ") {
		t.Errorf("known hosts %q", data)
	}
}

func TestParseLogin(t *testing.T) {
	for _, tc := range []struct {
		arg, user string
		want      target
		err       bool
	}{
		{arg: "vm/web", want: target{resource: "virtualmachines", name: "web"}},
		{arg: "fedora@vm/web", user: "fedora", want: target{resource: "virtualmachines", name: "web"}},
		{arg: "root@vmi/web/prod", user: "root", want: target{resource: "virtualmachineinstances", name: "web", namespace: "prod"}},
		{arg: "root@vmi/web.prod", user: "root", want: target{resource: "virtualmachineinstances", name: "web", namespace: "prod"}},
		{arg: "@vm/web", err: true},
		{arg: "fedora@web", err: true},
	} {
		user, got, err := parseLogin(tc.arg)
		if tc.err {
			if err == nil {
				t.Errorf("%q: want an error", tc.arg)
			}
			continue
		}
		if err != nil || user != tc.user || got != tc.want {
			t.Errorf("%q: %q %+v %v; want %q %+v, error %v", tc.arg, user, got, err, tc.user, tc.want, tc.err)
		}
	}
}

func TestLoginUser(t *testing.T) {
	o := &sshOptions{user: "flag"}
	if got := o.loginUser("target"); got != "target" {
		t.Errorf("USER@ first: %q", got)
	}
	if got := o.loginUser(""); got != "flag" {
		t.Errorf("then --username: %q", got)
	}
	if got := (&sshOptions{}).loginUser(""); got == "" {
		t.Error("then the local user: empty")
	}
}

func TestLocalSSHArgs(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cl := newClientLoader(pflag.NewFlagSet("test", pflag.ContinueOnError))
	cl.rules.ExplicitPath = "/home/me/my kube/config"
	cl.overrides.CurrentContext = "prod"
	o := &sshOptions{port: 2222, identityFiles: []string{"/k/id"}, knownHosts: "/k/known"}
	tgt := target{resource: "virtualmachines", name: "web", namespace: "ns"}
	argv, err := localSSHArgs(cl, o, "ssh", tgt, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ssh",
		"-o", "ProxyCommand=" + shellQuote(self) + " --kubeconfig '/home/me/my kube/config' --context prod port-forward --stdio vm/web.ns 2222",
		"-o", "UserKnownHostsFile=/k/known", "-i", "/k/id"}
	if strings.Join(argv, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv\n%q\nwant\n%q", argv, want)
	}
	// The default known hosts file is virtctl's own: the system ssh keeps to its own.
	argv, _ = localSSHArgs(nil, &sshOptions{port: 22, knownHosts: "/k/known"}, "scp", tgt, false)
	if strings.Contains(strings.Join(argv, " "), "UserKnownHostsFile") || argv[0] != "scp" {
		t.Errorf("argv %q", argv)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path-1.2": "plain/path-1.2",
		"two words":      "'two words'",
		"it's":           `'it'\''s'`,
		"":               "''",
		"$(reboot)":      "'$(reboot)'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
