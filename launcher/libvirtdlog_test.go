package launcher

import (
	"bytes"
	"strings"
	"testing"
)

func TestForwardLibvirtdLog(t *testing.T) {
	in := strings.Join([]string{
		"2026-11-27 02:42:15.319+0000: 68: info : libvirt version: 9.0.0, package: 9.0.0-4+deb12u2 (Debian)",
		"2026-11-27 02:42:15.327+0000: 68: warning : virSecurityManagerNew:194 : Configured security driver \"none\" disables default policy to create confined guests",
		"2026-11-27 02:42:15.328+0000: 68: error : virHostCPUGetCPUID:1422 : Unable to open /dev/kvm: No such file or directory",
		"2026-11-27 02:42:15.329+0000: 68: error : virGDBusGetSessionBus:126 : internal error: Unable to get session bus connection: Cannot spawn a message bus without a machine-id",
		"2026-11-27 02:42:15.329+0000: 68: error : virGDBusGetSystemBus:99 : internal error: Unable to get system bus connection: Could not connect: No such file or directory",
		"2026-11-27 02:42:17.000+0000: 70: error : qemuProcessReportLogError:1234 : internal error: QEMU unexpectedly closed the monitor",
		"2026-11-27 02:42:17.000+0000: 70: error : virHostCPUGetCPUID:1422 : Unable to open /dev/kvm: Permission denied",
		"a line libvirt did not format",
	}, "\n") + "\n"
	var out bytes.Buffer
	forwardLibvirtdLog(strings.NewReader(in), &out)
	want := []string{
		"2026-11-27 02:42:15.319+0000: 68: info : libvirt version: 9.0.0, package: 9.0.0-4+deb12u2 (Debian)",
		"2026-11-27 02:42:17.000+0000: 70: error : qemuProcessReportLogError:1234 : internal error: QEMU unexpectedly closed the monitor",
		// /dev/kvm present but refused is news: only its absence is expected.
		"2026-11-27 02:42:17.000+0000: 70: error : virHostCPUGetCPUID:1422 : Unable to open /dev/kvm: Permission denied",
		"a line libvirt did not format",
	}
	if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("forwarded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
