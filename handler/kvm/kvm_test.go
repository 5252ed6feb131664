package kvm

import (
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

type fakeDevice struct {
	version   int
	userMem   int
	createErr error
	closed    *bool
}

func (d fakeDevice) APIVersion() (int, error) { return d.version, nil }
func (d fakeDevice) CheckExtension(c int) (int, error) {
	if c != capUserMemory {
		return 0, fmt.Errorf("unexpected capability %d", c)
	}
	return d.userMem, nil
}
func (d fakeDevice) CreateVM() error { return d.createErr }
func (d fakeDevice) Close() error    { *d.closed = true; return nil }

const (
	vmxCPU  = "processor\t: 0\nflags\t\t: fpu vme sse2 vmx ept\n\nprocessor\t: 1\nflags\t\t: fpu vme sse2 vmx ept\n"
	svmCPU  = "processor\t: 0\nflags\t\t: fpu sse2 svm npt\n"
	pvmCPU  = "processor\t: 0\nflags\t\t: fpu sse2 cx16 hypervisor\n" // this project's machines
	bareCPU = "processor\t: 0\nflags\t\t: fpu sse2\n"
)

func TestUsable(t *testing.T) {
	good := fakeDevice{version: 12, userMem: 1}
	for _, tc := range []struct {
		name    string
		openErr error
		dev     fakeDevice
		modules string
		cpuinfo string
		arch    string
		usable  bool
		reason  string
	}{
		{name: "intel with vt-x", dev: good, modules: "kvm kvm_intel", cpuinfo: vmxCPU, usable: true, reason: "hardware virtualization"},
		{name: "amd with amd-v", dev: good, modules: "kvm kvm_amd", cpuinfo: svmCPU, usable: true, reason: "works"},
		{name: "no device", openErr: &fs.PathError{Op: "open", Path: DevicePath, Err: syscall.ENOENT}, cpuinfo: vmxCPU, reason: "does not exist"},
		{name: "device not permitted", openErr: &fs.PathError{Op: "open", Path: DevicePath, Err: syscall.EACCES}, reason: "permission denied"},
		{name: "old api", dev: fakeDevice{version: 11, userMem: 1}, modules: "kvm_intel", cpuinfo: vmxCPU, reason: "KVM_GET_API_VERSION with 11"},
		{name: "no user memory", dev: fakeDevice{version: 12}, modules: "kvm_intel", cpuinfo: vmxCPU, reason: "KVM_CAP_USER_MEMORY"},
		{name: "create vm fails", dev: fakeDevice{version: 12, userMem: 1, createErr: syscall.EBUSY}, modules: "kvm_intel", cpuinfo: vmxCPU, reason: "KVM_CREATE_VM"},
		{name: "pvm module (this machine)", dev: good, modules: "kvm kvm_pvm", cpuinfo: pvmCPU, reason: "kvm_pvm"},
		{name: "pvm beside a hardware module", dev: good, modules: "kvm kvm_pvm kvm_intel", cpuinfo: vmxCPU, usable: true},
		{name: "no vmx/svm in a vm", dev: good, modules: "kvm", cpuinfo: pvmCPU, reason: "nested"},
		{name: "no vmx/svm on metal", dev: good, modules: "kvm kvm_intel", cpuinfo: bareCPU, reason: "no vmx or svm"},
		{name: "cpuinfo unreadable", dev: good, modules: "kvm_intel", reason: "cannot read /proc/cpuinfo"},
		{name: "arm64 has no x86 flags", dev: good, modules: "kvm", arch: "arm64", usable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := false
			tc.dev.closed = &closed
			arch := tc.arch
			if arch == "" {
				arch = "amd64"
			}
			p := Probe{
				OpenDevice: func(path string) (Device, error) {
					if path != DevicePath {
						t.Errorf("opened %q", path)
					}
					if tc.openErr != nil {
						return nil, tc.openErr
					}
					return tc.dev, nil
				},
				ReadFile: func(path string) ([]byte, error) {
					if path != cpuinfoPath || tc.cpuinfo == "" {
						return nil, fs.ErrNotExist
					}
					return []byte(tc.cpuinfo), nil
				},
				ModuleLoaded: func(name string) bool { return strings.Contains(" "+tc.modules+" ", " "+name+" ") },
				Arch:         arch,
			}
			usable, reason := p.Usable()
			if usable != tc.usable || !strings.Contains(reason, tc.reason) {
				t.Errorf("Usable() = %v, %q; want %v and a reason containing %q", usable, reason, tc.usable, tc.reason)
			}
			if tc.openErr == nil && !closed {
				t.Error("device left open")
			}
		})
	}
}

// TestHostProbe runs the real probe: it must not fail, whatever the host. On this project's
// machines (kvm_pvm) it must find KVM unusable.
func TestHostProbe(t *testing.T) {
	usable, reason := Usable()
	t.Logf("Usable() = %v: %s", usable, reason)
	if reason == "" {
		t.Error("no reason")
	}
	if _, err := os.Stat("/sys/module/kvm_pvm"); err == nil && usable && !HostProbe().ModuleLoaded("kvm_intel") && !HostProbe().ModuleLoaded("kvm_amd") {
		t.Error("kvm_pvm host judged usable")
	}
}

// TestHostDevice checks the real ioctls where a KVM device can be opened (kvm_pvm answers
// them too): a wrong ioctl number would fail here rather than mislabel a good host.
func TestHostDevice(t *testing.T) {
	dev, err := openDevice(DevicePath)
	if err != nil {
		t.Skipf("no KVM device here: %v", err)
	}
	defer dev.Close()
	if v, err := dev.APIVersion(); v != apiVersion || err != nil {
		t.Errorf("APIVersion() = %d, %v", v, err)
	}
	if n, err := dev.CheckExtension(capUserMemory); n <= 0 || err != nil {
		t.Errorf("CheckExtension(KVM_CAP_USER_MEMORY) = %d, %v", n, err)
	}
	if err := dev.CreateVM(); err != nil {
		t.Errorf("CreateVM() = %v", err)
	}
}
