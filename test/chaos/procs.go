//go:build chaos

package chaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vmctl/vmctl/launcher/layout"
)

// The local cluster's nodes and pods all live in this machine's PID namespace, so a pod's
// process is a host process: faults find them by scanning /proc, as an operator with a shell
// on the node would, and the invariants count guests the same way.

// proc is one host process as /proc shows it.
type proc struct {
	pid     int
	ppid    int
	comm    string
	cmdline [][]byte
	environ []byte
}

// processes lists the host's processes whose comm is one of comms (all when none given).
// Processes that exit while being read are skipped.
func processes(comms ...string) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue
		}
		p := proc{pid: pid, comm: strings.TrimSpace(string(comm))}
		if len(comms) > 0 && !contains(comms, p.comm) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		p.cmdline = bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		p.environ, _ = os.ReadFile(filepath.Join(dir, "environ"))
		p.ppid = parentPID(dir)
		out = append(out, p)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parentPID reads PPid from /proc/<pid>/status (0 when unreadable).
func parentPID(dir string) int {
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// hasEnv says whether the process's environment holds exactly name=value.
func (p proc) hasEnv(name, value string) bool {
	return bytes.Contains(append([]byte{0}, append(p.environ, 0)...), []byte("\x00"+name+"="+value+"\x00"))
}

// hasArgs says whether the command line holds args one after the other.
func (p proc) hasArgs(args ...string) bool {
	for i := 0; i+len(args) <= len(p.cmdline); i++ {
		match := true
		for j, a := range args {
			if string(p.cmdline[i+j]) != a {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// domain is the libvirt domain a QEMU process runs (-name guest=<domain>,...), or "".
func (p proc) domain() string {
	for _, arg := range p.cmdline {
		if name, ok := bytes.CutPrefix(arg, []byte("guest=")); ok {
			name, _, _ = bytes.Cut(name, []byte(","))
			return string(name)
		}
	}
	return ""
}

// qemuComm is QEMU's comm: the kernel keeps the first 15 bytes of qemu-system-x86_64.
const qemuComm = "qemu-system-x86"

// guestCounts counts the QEMU processes per instance name of the namespace: a VM's domain is
// <namespace>_<VMI name>, and its VMI has the VM's name.
func guestCounts(namespace string) map[string]int {
	counts := map[string]int{}
	prefix := layout.DomainName(namespace, "")
	for _, p := range processes(qemuComm) {
		if name, ok := strings.CutPrefix(p.domain(), prefix); ok {
			counts[name]++
		}
	}
	return counts
}

// findOne returns the single process of comm that match accepts: a fault must hit exactly
// the process it means, never a look-alike of another cluster or test.
func findOne(comm string, match func(proc) bool) (proc, error) {
	var found []proc
	for _, p := range processes(comm) {
		if match(p) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return proc{}, fmt.Errorf("%d %s processes match, want 1", len(found), comm)
	}
	return found[0], nil
}
