// Package kvm decides whether a node can run guests with hardware KVM or must fall back to
// QEMU's software emulator (TCG).
//
// A /dev/kvm node is not enough: the project's machines expose /dev/kvm from the kvm_pvm
// module (software "PVM" virtualization) on a CPU without VT-x. There KVM_CREATE_VM
// succeeds, SeaBIOS and the kernel decompressor run, and then stock Linux kernels die with
// "KVM internal error. Suberror: 1 ... emulation failure". So besides probing the device,
// Usable requires the hardware-virtualization CPU flag and a hardware vendor module.
package kvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// Domain types, as libvirt spells them.
const (
	TypeKVM  = "kvm"
	TypeQEMU = "qemu"
)

const (
	// DevicePath is the KVM device node.
	DevicePath  = "/dev/kvm"
	cpuinfoPath = "/proc/cpuinfo"
	// apiVersion is the only KVM API version Linux has shipped since 2.6.22.
	apiVersion = 12
	// capUserMemory is KVM_CAP_USER_MEMORY, which QEMU needs to give a guest its RAM.
	capUserMemory = 3
)

// Device is an open KVM device.
type Device interface {
	// APIVersion is KVM_GET_API_VERSION.
	APIVersion() (int, error)
	// CheckExtension is KVM_CHECK_EXTENSION: > 0 when the capability is present.
	CheckExtension(capability int) (int, error)
	// CreateVM is KVM_CREATE_VM, closing the VM again at once.
	CreateVM() error
	Close() error
}

// Probe is what Usable consults; tests replace its functions to play any host.
type Probe struct {
	// OpenDevice opens the KVM device read-write.
	OpenDevice func(path string) (Device, error)
	// ReadFile reads /proc/cpuinfo.
	ReadFile func(path string) ([]byte, error)
	// ModuleLoaded says whether /sys/module/<name> exists.
	ModuleLoaded func(name string) bool
	// Arch is runtime.GOARCH: the CPU flag check only means something on x86.
	Arch string
}

// HostProbe probes this host.
func HostProbe() Probe {
	return Probe{
		OpenDevice: openDevice,
		ReadFile:   os.ReadFile,
		ModuleLoaded: func(name string) bool {
			_, err := os.Stat("/sys/module/" + name)
			return err == nil
		},
		Arch: runtime.GOARCH,
	}
}

// Usable reports whether KVM can really run a guest on this host, and why (or why not).
func Usable() (bool, string) { return HostProbe().Usable() }

// Usable runs the checks in order, cheapest explanation first for the operator.
func (p Probe) Usable() (bool, string) {
	dev, err := p.OpenDevice(DevicePath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, DevicePath + " does not exist: no KVM module is loaded, or the device is not passed to this container"
	case err != nil:
		return false, fmt.Sprintf("cannot open %s: %v", DevicePath, err)
	}
	defer dev.Close()
	if v, err := dev.APIVersion(); err != nil || v != apiVersion {
		return false, fmt.Sprintf("%s answers KVM_GET_API_VERSION with %d (error %v), want %d", DevicePath, v, err, apiVersion)
	}
	if n, err := dev.CheckExtension(capUserMemory); err != nil || n <= 0 {
		return false, fmt.Sprintf("%s lacks KVM_CAP_USER_MEMORY (error %v)", DevicePath, err)
	}
	if err := dev.CreateVM(); err != nil {
		return false, fmt.Sprintf("KVM_CREATE_VM on %s fails: %v", DevicePath, err)
	}
	hardware := p.ModuleLoaded("kvm_intel") || p.ModuleLoaded("kvm_amd")
	if p.ModuleLoaded("kvm_pvm") && !hardware {
		return false, "KVM comes from the kvm_pvm module (software PVM, no VT-x/AMD-V): it creates VMs, " +
			"but stock Linux guests die with \"KVM internal error ... emulation failure\""
	}
	if p.Arch != "amd64" && p.Arch != "386" {
		return true, fmt.Sprintf("%s works (API %d, VM created)", DevicePath, apiVersion)
	}
	cpuinfo, err := p.ReadFile(cpuinfoPath)
	if err != nil {
		return false, fmt.Sprintf("cannot read %s to check for hardware virtualization: %v", cpuinfoPath, err)
	}
	flags := cpuFlags(cpuinfo)
	if !flags["vmx"] && !flags["svm"] {
		reason := "the CPU has no vmx or svm flag (no VT-x/AMD-V)"
		if flags["hypervisor"] {
			reason += "; this host is itself a VM without nested virtualization"
		}
		return false, reason + ", so KVM cannot run guests at hardware speed, or at all"
	}
	return true, fmt.Sprintf("%s works (API %d, VM created) on a CPU with hardware virtualization", DevicePath, apiVersion)
}

// cpuFlags is the set of flags of the first CPU in /proc/cpuinfo (x86 lists them on a
// "flags" line per CPU; all CPUs of a host have the virtualization flags alike).
func cpuFlags(cpuinfo []byte) map[string]bool {
	flags := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		for _, f := range strings.Fields(value) {
			flags[f] = true
		}
		break
	}
	return flags
}
