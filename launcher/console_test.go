package launcher

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
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

// A flooding guest's log keeps its disk use under the bound, and everything QEMU writes
// reaches the output, even what it appends while a copy is under way.
func TestConsoleFollowerCapsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	qemu, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer qemu.Close()
	const max, chunk = 64 << 10, 16 << 10
	// QEMU writes a line each time the follower writes to its output: mid-copy, before the
	// follower frees what it copied.
	var out bytes.Buffer
	appends := 0
	mid := writerFunc(func(p []byte) (int, error) {
		appends++
		if _, err := qemu.WriteString("written during the copy\n"); err != nil {
			t.Fatal(err)
		}
		return out.Write(p)
	})
	c := &consoleFollower{path: path, max: max, out: mid}
	defer c.close()
	written := 0
	for i := range 40 {
		n, err := qemu.Write(bytes.Repeat([]byte("x"), chunk))
		if err != nil {
			t.Fatal(err)
		}
		written += n
		if err := c.step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if used := diskUse(t, path); used > max+chunk+64<<10 {
			t.Fatalf("step %d: the log uses %d bytes of disk, want at most about %d", i, used, max)
		}
	}
	if err := c.step(); err != nil { // the last mid-copy line; this copy adds one more
		t.Fatal(err)
	}
	written += appends * len("written during the copy\n")
	if out.Len() != written-len("written during the copy\n") {
		t.Errorf("copied %d bytes, want the %d written", out.Len(), written)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// diskUse is the disk space a file holds, holes apart.
func diskUse(t *testing.T, path string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}
