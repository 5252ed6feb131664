package virtctl

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSCPLocation(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want scpLocation
		err  bool
	}{
		{arg: "./file", want: scpLocation{path: "./file"}},
		{arg: "/tmp/a:b", want: scpLocation{path: "/tmp/a:b"}},
		{arg: "notes:txt", want: scpLocation{path: "notes:txt"}},
		{arg: "vm/web:/tmp/x", want: scpLocation{remote: true, target: target{resource: "virtualmachines", name: "web"}, path: "/tmp/x"}},
		{arg: "fedora@vmi/web.prod:", want: scpLocation{remote: true, user: "fedora", target: target{resource: "virtualmachineinstances", name: "web", namespace: "prod"}, path: "."}},
		{arg: "root@vm/web/prod:logs", want: scpLocation{remote: true, user: "root", target: target{resource: "virtualmachines", name: "web", namespace: "prod"}, path: "logs"}},
		{arg: "vm/:x", err: true},
		{arg: "@vm/web:x", err: true},
	} {
		got, err := parseSCPLocation(tc.arg)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("%q: %+v, %v; want %+v, error %v", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

func TestSCPArguments(t *testing.T) {
	for _, args := range [][]string{
		{"scp", "a", "b"},
		{"scp", "vm/web:a", "vmi/db:b"},
	} {
		root := NewRootCommand()
		root.SetArgs(args)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "exactly one") {
			t.Errorf("%q: %v, want exactly one side on a guest", args, err)
		}
	}
}

func TestParseSCPHeader(t *testing.T) {
	for _, tc := range []struct {
		line string
		mode os.FileMode
		size int64
		name string
		err  bool
	}{
		{line: "C0644 12 a.txt", mode: 0o644, size: 12, name: "a.txt"},
		{line: "D0755 0 dir", mode: 0o755, name: "dir"},
		{line: "C0644 3 with space", mode: 0o644, size: 3, name: "with space"},
		{line: "C4755 1 suid", mode: 0o755, size: 1, name: "suid"}, // no setuid from a guest
		{line: "C0644 1 ../evil", err: true},
		{line: "C0644 1 ..", err: true},
		{line: "C0644 1 a/b", err: true},
		{line: "C0644 -1 a", err: true},
		{line: "C0999 1 a", err: true},
		{line: "C0644 1", err: true},
	} {
		mode, size, name, err := parseSCPHeader(tc.line)
		if (err != nil) != tc.err || (!tc.err && (mode != tc.mode || size != tc.size || name != tc.name)) {
			t.Errorf("%q: %v %d %q %v", tc.line, mode, size, name, err)
		}
	}
}

// TestSCPReceiveRefusesTraversal: a guest that names a file outside the destination is cut off
// before anything is written.
func TestSCPReceiveRefusesTraversal(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "in")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	from := bufio.NewReader(strings.NewReader("D0755 0 sub\nC0644 4 ../../escaped\nevil\x00E\n"))
	err := scpReceive(io.Discard, from, dst, true)
	if err == nil || !strings.Contains(err.Error(), "unsafe name") {
		t.Fatalf("err %v, want an unsafe name refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped")); !os.IsNotExist(err) {
		t.Errorf("the file escaped: %v", err)
	}
}

// TestSCPReceiveProtocol: what a sink answers, byte by byte, to a source's file and directory.
func TestSCPReceiveProtocol(t *testing.T) {
	dst := t.TempDir()
	from := bufio.NewReader(strings.NewReader("T1 0 1 0\nD0750 0 d\nC0600 5 f\nhello\x00E\n"))
	var answers bytes.Buffer
	if err := scpReceive(&answers, from, dst, true); err != nil {
		t.Fatal(err)
	}
	// Ready, T, D, C, the file's end, E: six OKs.
	if answers.String() != strings.Repeat("\x00", 6) {
		t.Errorf("answers %q", answers.String())
	}
	b, err := os.ReadFile(filepath.Join(dst, "d", "f"))
	if err != nil || string(b) != "hello" {
		t.Errorf("d/f: %q, %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dst, "d", "f")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

// writeTree makes dir/top.txt and dir/sub/{a,b}.
func writeTree(t *testing.T, dir string) {
	t.Helper()
	for name, content := range map[string]string{"top.txt": "top\n", "sub/a": "aaa", "sub/b": strings.Repeat("b", 100000)} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s and %s differ", a, b)
	}
}

// TestSCPAgainstTheSystemSCP copies both ways, files and directories, against the real
// `scp -t` and `scp -f` run by the in-process ssh server, as a guest's sshd runs them.
func TestSCPAgainstTheSystemSCP(t *testing.T) {
	if _, err := exec.LookPath("scp"); err != nil {
		t.Skip("no scp on this machine")
	}
	hostKey, userKey := newSigner(t), newSigner(t)
	guest := t.TempDir()
	srv := startSSHServer(t, hostKey, userKey.PublicKey(), guest)
	kh := knownHostsFile{path: filepath.Join(t.TempDir(), "known_hosts"), warn: io.Discard}
	client, err := srv.dial(t, userKey, kh)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	local := t.TempDir()
	writeTree(t, filepath.Join(local, "tree"))

	t.Run("upload a file under a new name", func(t *testing.T) {
		if err := scpUpload(client, filepath.Join(local, "tree", "top.txt"), "renamed.txt", false); err != nil {
			t.Fatal(err)
		}
		sameFile(t, filepath.Join(local, "tree", "top.txt"), filepath.Join(guest, "renamed.txt"))
	})
	t.Run("upload a directory", func(t *testing.T) {
		if err := scpUpload(client, filepath.Join(local, "tree"), guest, true); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"top.txt", "sub/a", "sub/b"} {
			sameFile(t, filepath.Join(local, "tree", name), filepath.Join(guest, "tree", name))
		}
	})
	t.Run("a directory needs -r", func(t *testing.T) {
		if err := scpUpload(client, filepath.Join(local, "tree"), "x", false); err == nil {
			t.Fatal("want an error")
		}
	})
	t.Run("download a file into a directory", func(t *testing.T) {
		into := t.TempDir()
		if err := scpDownload(client, "tree/sub/b", into, false); err != nil {
			t.Fatal(err)
		}
		sameFile(t, filepath.Join(local, "tree", "sub", "b"), filepath.Join(into, "b"))
	})
	t.Run("download a directory under a new name", func(t *testing.T) {
		into := filepath.Join(t.TempDir(), "copy")
		if err := scpDownload(client, filepath.Join(guest, "tree"), into, true); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"top.txt", "sub/a", "sub/b"} {
			sameFile(t, filepath.Join(local, "tree", name), filepath.Join(into, name))
		}
	})
	t.Run("a missing remote file", func(t *testing.T) {
		err := scpDownload(client, "absent", t.TempDir(), false)
		if err == nil || !strings.Contains(err.Error(), "absent") {
			t.Fatalf("err %v, want the remote scp's complaint", err)
		}
	})
}
