package launcher

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestConsoleFollowerStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	var out bytes.Buffer
	c := &consoleFollower{path: path, out: &out}
	defer c.close()

	write := func(s string, flag int) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want string // all output so far
	}{
		{name: "no file yet", do: func() {}, want: ""},
		{name: "file appears", do: func() { write("boot\n", os.O_APPEND) }, want: "boot\n"},
		{name: "nothing new", do: func() {}, want: "boot\n"},
		{name: "appended", do: func() { write("login: ", os.O_APPEND) }, want: "boot\nlogin: "},
		{name: "truncated and rewritten", do: func() { write("new\n", os.O_TRUNC) }, want: "boot\nlogin: new\n"},
	}
	for _, s := range steps {
		s.do()
		if err := c.step(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := out.String(); got != s.want {
			t.Fatalf("%s: output %q, want %q", s.name, got, s.want)
		}
	}
}

func TestFollowConsoleDrainsOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	var out bytes.Buffer
	stop := make(chan struct{})
	// A poll interval far longer than the test: only the final drain can copy the file.
	done := followConsole(path, 0, &out, 1<<40, stop)
	if err := os.WriteFile(path, []byte("reboot: Power down\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	if got := out.String(); got != "reboot: Power down\n" {
		t.Errorf("output %q", got)
	}
}

// A flooding guest's log stays under the bound, and everything copied before a truncation
// reaches the output.
func TestConsoleFollowerCapsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	var out bytes.Buffer
	c := &consoleFollower{path: path, max: 100, out: &out}
	defer c.close()
	qemu, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer qemu.Close()
	line := bytes.Repeat([]byte("x"), 39)
	for i := range 20 {
		if _, err := qemu.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		if err := c.step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() >= 100 {
			t.Fatalf("step %d: log size %d (%v), want < 100", i, fi.Size(), err)
		}
	}
	if out.Len() != 20*40 {
		t.Errorf("copied %d bytes, want %d", out.Len(), 20*40)
	}
}
