package launcher

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The reaper waits for any child of the test process: no other test in this package may
// exec and wait for a command.

func TestReaperStartReportsExit(t *testing.T) {
	r, err := NewReaper()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	for _, tc := range []struct {
		script string
		want   string
	}{
		{"exit 0", "exit status 0"},
		{"exit 3", "exit status 3"},
		{"kill -9 $$", "killed by signal killed"},
	} {
		exited, err := r.Start(exec.Command("sh", "-c", tc.script))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case st := <-exited:
			if st.String() != tc.want {
				t.Errorf("%q: got %s, want %s", tc.script, st, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: no exit status", tc.script)
		}
	}
}

// TestReaperReapsOrphans is what happens to QEMU: libvirtd's intermediate child exits, the
// grandchild is reparented to the subreaper and must not stay a zombie when it ends.
func TestReaperReapsOrphans(t *testing.T) {
	r, err := NewReaper()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command("sh", "-c", "sleep 0.3 & echo $!")
	cmd.Stdout = pw
	exited, err := r.Start(cmd)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	<-exited
	if ppid := parentOf(t, orphan); ppid != os.Getpid() {
		t.Logf("orphan %d has parent %d, not us (%d): already gone?", orphan, ppid, os.Getpid())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(orphan)); os.IsNotExist(err) {
			return // reaped: not even a zombie is left
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still exists (a zombie nobody reaped)", orphan)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parentOf reads the parent pid from /proc/PID/stat; -1 if the process is gone.
func parentOf(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name is in parentheses and may contain spaces: the fields after it count.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}
