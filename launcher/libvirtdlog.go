package launcher

import (
	"bufio"
	"io"
	"strings"

	"k8s.io/klog/v2"
)

// expectedInPod are lines libvirtd 9.0 logs on every start in a pod, whatever its
// configuration, about things a pod has not got and the launcher does not use. The drivers that
// probed for more (network, nodedev, ...) are not in the image (hack/images/launcher).
var expectedInPod = []struct{ function, text string }{
	// An unprivileged daemon ties itself to its desktop session and to logind's shutdown
	// signal (remote_daemon.c, daemonRunStateInit), unconditionally; a pod has no D-Bus.
	{"virGDBusGetSessionBus", "Unable to get session bus connection"},
	{"virGDBusGetSystemBus", "Unable to get system bus connection"},
	// The QEMU driver reads the host CPU through KVM; a pod that emulates has no /dev/kvm.
	{"virHostCPUGetCPUID", "Unable to open /dev/kvm: No such file or directory"},
	// qemu.conf's security_driver = "none", on purpose (no AppArmor or SELinux in a pod).
	{"virSecurityManagerNew", `Configured security driver "none"`},
}

// isExpectedInPod says whether a libvirt log line ("<time>: <tid>: <level> : <function>:<line>
// : <message>") is one of expectedInPod.
func isExpectedInPod(line string) bool {
	parts := strings.SplitN(line, " : ", 3)
	if len(parts) < 3 {
		return false
	}
	function, _, _ := strings.Cut(parts[1], ":")
	for _, e := range expectedInPod {
		if function == e.function && strings.Contains(parts[2], e.text) {
			return true
		}
	}
	return false
}

// forwardLibvirtdLog copies libvirtd's output to out line by line, where the container log
// shows it, but for the lines expectedInPod, which go to the launcher's log at verbosity 2: a
// clean start then logs no error, and any error that shows is news.
func forwardLibvirtdLog(in io.Reader, out io.Writer) {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if isExpectedInPod(line) {
			klog.V(2).InfoS("libvirtd, as expected in a pod", "line", line)
			continue
		}
		_, _ = io.WriteString(out, line+"\n")
	}
	if err := scanner.Err(); err != nil {
		// A line beyond the buffer: copy the rest as it comes.
		_, _ = io.Copy(out, in)
	}
}
