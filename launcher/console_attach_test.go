package launcher

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestSerialPTYFromXML(t *testing.T) {
	for _, tc := range []struct {
		name, xml, want string
		wantErr         bool
	}{
		{"running", `<domain><devices><serial type='pty'><source path='/dev/pts/3'/><target type='isa-serial' port='0'/></serial><console type='pty' tty='/dev/pts/3'/></devices></domain>`, "/dev/pts/3", false},
		{"port 1 only", `<domain><devices><serial type='pty'><source path='/dev/pts/4'/><target port='1'/></serial></devices></domain>`, "", true},
		{"not allocated yet", `<domain><devices><serial type='pty'><target port='0'/></serial></devices></domain>`, "", true},
		{"file serial", `<domain><devices><serial type='file'><source path='/tmp/x'/><target port='0'/></serial></devices></domain>`, "", true},
		{"garbage", `<domain`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serialPTYFromXML(tc.xml)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("got %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
	if isUnder("/etc/shadow", "/dev/pts/") || !isUnder("/dev/pts/0", "/dev/pts/") {
		t.Fatal("isUnder")
	}
}

// openPTY opens a new pty pair's master and returns it with the slave's path, as QEMU's pty
// chardev does.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no ptys here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return master, fmt.Sprintf("/dev/pts/%d", n)
}

// TestRelayPTY: what the guest writes reaches out byte for byte (no CR/LF rewriting), what the
// user types reaches the guest without being echoed back to it.
func TestRelayPTY(t *testing.T) {
	guest, path := openPTY(t)
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- relayPTY(path, inR, out) }()

	// Give the relay time to open the pty and set raw mode; earlier bytes would be lost or
	// echoed, as on a real serial line with nobody attached.
	time.Sleep(200 * time.Millisecond)
	if _, err := guest.Write([]byte("VMCTL-GUEST-READY\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := inW.Write([]byte("ls\r")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_ = guest.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := guest.Read(buf)
	if err != nil || string(buf[:n]) != "ls\r" {
		t.Fatalf("guest read %q, %v; want the typed bytes unchanged", buf[:n], err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "VMCTL-GUEST-READY\n" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := out.String(); got != "VMCTL-GUEST-READY\n" {
		t.Fatalf("console showed %q", got)
	}
	inW.Close() // the user left: the relay ends
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("relay did not end when its input did")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
