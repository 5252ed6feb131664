// Package domain turns a VirtualMachineInstance into libvirt domain XML. It is pure: the
// node resolves paths and network plumbing first (Environment), and Convert only checks and
// translates, so everything here is testable without libvirt.
package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// defaultMachine is the machine type when the spec names none: q35 gives PCIe and SATA
// (AHCI), which the disk buses rely on.
const defaultMachine = "q35"

var machineRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// Convert builds the domain of vmi. Invalid or unsupported input gives an error naming
// every offending field; Convert never panics.
func Convert(vmi *v1.VirtualMachineInstance, env Environment) (*libvirtxml.Domain, error) {
	if vmi == nil {
		return nil, fmt.Errorf("no VirtualMachineInstance to convert")
	}
	if env.DomainType != TypeKVM && env.DomainType != TypeQEMU {
		return nil, fmt.Errorf("domain type %q: want %q or %q", env.DomainType, TypeKVM, TypeQEMU)
	}
	c := &converter{vmi: vmi, env: env}
	kib := uint(c.memoryKiB())
	d := &libvirtxml.Domain{
		Type:          env.DomainType,
		Name:          c.name(),
		UUID:          c.uuid(),
		Memory:        &libvirtxml.DomainMemory{Unit: "KiB", Value: kib},
		CurrentMemory: &libvirtxml.DomainCurrentMemory{Unit: "KiB", Value: kib},
		OS:            c.os(),
		Features:      c.features(),
		Clock:         c.clock(),
		MemoryBacking: c.memoryBacking(),
		OnPoweroff:    "destroy",
		OnReboot:      "restart",
		OnCrash:       "destroy",
		Devices:       &libvirtxml.DomainDeviceList{},
	}
	d.VCPU, d.CPU = c.cpu()
	d.SysInfo = c.sysInfo(d.OS)
	d.Devices.Controllers, d.Devices.Disks = c.disks()
	d.Devices.Interfaces, d.QEMUCommandline = c.interfaces()
	if args := c.acpiTables(d.OS); len(args) > 0 {
		if d.QEMUCommandline == nil {
			d.QEMUCommandline = &libvirtxml.DomainQEMUCommandline{}
		}
		d.QEMUCommandline.Args = append(d.QEMUCommandline.Args, args...)
	}
	if ptr.Deref(vmi.Spec.Domain.Devices.AutoattachSerialConsole, true) {
		d.Devices.Serials, d.Devices.Consoles = c.console()
	}
	c.extraDevices(d.Devices)
	if d.Devices.Filesystems = c.filesystems(); len(d.Devices.Filesystems) > 0 {
		d.MemoryBacking = sharedMemory(d.MemoryBacking)
	}
	d.Devices.Controllers = append([]libvirtxml.DomainController{usbController(d.Devices)}, d.Devices.Controllers...)
	d.IOThreads = c.ioThreads(d.Devices.Disks)
	if len(c.errs) > 0 {
		return nil, c.errs.ToAggregate()
	}
	return d, nil
}

// Marshal renders the domain as indented XML ending in a newline, the form libvirt's
// DefineXML takes; callers hand libvirt bytes.
func Marshal(d *libvirtxml.Domain) ([]byte, error) {
	out, err := d.Marshal()
	if err != nil {
		return nil, err
	}
	return []byte(out + "\n"), nil
}

type converter struct {
	vmi  *v1.VirtualMachineInstance
	env  Environment
	errs field.ErrorList
	// boots are the boot orders taken so far, by disks and interfaces together.
	boots map[uint]bool
}

// bootOrder takes a boot order, which must be at least 1 and unique among disks and
// interfaces.
func (c *converter) bootOrder(p *field.Path, order uint) bool {
	if order == 0 || c.boots[order] {
		c.fail(field.Invalid(p, order, "must be at least 1 and unique among disks and interfaces"))
		return false
	}
	if c.boots == nil {
		c.boots = map[uint]bool{}
	}
	c.boots[order] = true
	return true
}

var (
	specPath   = field.NewPath("spec")
	domainPath = specPath.Child("domain")
)

func (c *converter) fail(err *field.Error) { c.errs = append(c.errs, err) }

// text rejects what XML cannot carry (invalid UTF-8, control characters other than tab and
// newlines): encoding/xml, which libvirtxml marshals with, would silently replace them, so
// the guest would get a different string than the spec asked for.
func (c *converter) text(p *field.Path, s string) bool {
	if !utf8.ValidString(s) {
		c.fail(field.Invalid(p, s, "must be valid UTF-8"))
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			c.fail(field.Invalid(p, s, fmt.Sprintf("must not contain the control character %U", r)))
			return false
		}
	}
	return true
}

// name is <namespace>_<name>, unique per node because both parts are DNS names without '_'.
func (c *converter) name() string {
	meta := field.NewPath("metadata")
	ns, name := c.vmi.Namespace, c.vmi.Name
	for _, msg := range validation.IsDNS1123Label(ns) {
		c.fail(field.Invalid(meta.Child("namespace"), ns, msg))
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		c.fail(field.Invalid(meta.Child("name"), name, msg))
	}
	return layout.DomainName(ns, name)
}

// uuid is the firmware UUID, so a VirtualMachine's guest sees the same SMBIOS UUID across
// restarts; a bare VMI falls back to its own UID.
func (c *converter) uuid() string {
	p, raw := domainPath.Child("firmware", "uuid"), ""
	if fw := c.vmi.Spec.Domain.Firmware; fw != nil {
		raw = string(fw.UUID)
	}
	if raw == "" {
		p, raw = field.NewPath("metadata", "uid"), string(c.vmi.UID)
	}
	if raw == "" {
		c.fail(field.Required(domainPath.Child("firmware", "uuid"), "neither a firmware UUID nor a UID to use instead"))
		return ""
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		c.fail(field.Invalid(p, raw, "must be a UUID: "+err.Error()))
		return ""
	}
	return id.String()
}

// os is the machine type and, for kernelBoot, the kernel, initrd and command line.
func (c *converter) os() *libvirtxml.DomainOS {
	machine := defaultMachine
	if m := c.vmi.Spec.Domain.Machine; m != nil && m.Type != "" {
		machine = m.Type
		if !machineRE.MatchString(machine) {
			c.fail(field.Invalid(domainPath.Child("machine", "type"), machine, "must be a QEMU machine type such as q35"))
		}
	}
	os := &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Arch: "x86_64", Machine: machine, Type: "hvm"}}
	fw := c.vmi.Spec.Domain.Firmware
	if fw != nil && fw.Bootloader != nil {
		c.bootloader(os, machine, fw.Bootloader)
	}
	if fw == nil || fw.KernelBoot == nil {
		return os
	}
	p := domainPath.Child("firmware", "kernelBoot")
	kb := fw.KernelBoot
	if kb.Container == nil {
		if kb.KernelArgs != "" {
			c.fail(field.Required(p.Child("container"), "kernelArgs need a kernel from a container"))
		}
		return os
	}
	cp := p.Child("container")
	if kb.Container.KernelPath == "" {
		// QEMU refuses -initrd without -kernel.
		c.fail(field.Required(cp.Child("kernelPath"), "kernelBoot needs a kernel"))
		return os
	}
	os.Kernel = c.hostFile(cp.Child("kernelPath"), c.env.KernelPath, "kernel")
	if kb.Container.InitrdPath != "" {
		os.Initrd = c.hostFile(cp.Child("initrdPath"), c.env.InitrdPath, "initrd")
	}
	if c.text(p.Child("kernelArgs"), kb.KernelArgs) {
		os.Cmdline = c.cmdline(kb.KernelArgs)
	}
	return os
}

// cmdline is the kernel command line: the spec's, and under emulation no_timer_check. At
// boot a Linux kernel checks that its timer interrupt ticks a few times within some 60 ms
// of wall time; a TCG guest on a busy node (several guests booting on two cores) misses
// that window, falls back through slower timer routings and, when those miss too, panics
// with "IO-APIC + timer doesn't work!". The option skips only that check, as cloud images
// set it for virtual machines; a disk-booted guest's own bootloader decides for itself.
func (c *converter) cmdline(args string) string {
	if c.env.DomainType != TypeQEMU || slices.Contains(strings.Fields(args), noTimerCheck) {
		return args
	}
	return strings.TrimSpace(args + " " + noTimerCheck)
}

const noTimerCheck = "no_timer_check"

// hostFile checks a path the node resolved for the field at p.
func (c *converter) hostFile(p *field.Path, path, what string) string {
	if !strings.HasPrefix(path, "/") {
		c.fail(field.Invalid(p, path, fmt.Sprintf("the node resolved no absolute %s path in the launcher pod", what)))
		return ""
	}
	if !c.text(p, path) {
		return ""
	}
	return path
}

// sysInfo passes the firmware serial number and the chassis to the guest's SMBIOS tables.
func (c *converter) sysInfo(os *libvirtxml.DomainOS) []libvirtxml.DomainSysInfo {
	smbios := &libvirtxml.DomainSysInfoSMBIOS{}
	if fw := c.vmi.Spec.Domain.Firmware; fw != nil && fw.Serial != "" && c.text(domainPath.Child("firmware", "serial"), fw.Serial) {
		smbios.System = &libvirtxml.DomainSysInfoSystem{Entry: []libvirtxml.DomainSysInfoEntry{{Name: "serial", Value: fw.Serial}}}
	}
	if ch := c.vmi.Spec.Domain.Chassis; ch != nil {
		var entries []libvirtxml.DomainSysInfoEntry
		for _, e := range []struct{ name, value string }{
			{"manufacturer", ch.Manufacturer}, {"version", ch.Version}, {"serial", ch.Serial}, {"asset", ch.Asset}, {"sku", ch.Sku},
		} {
			if e.value != "" && c.text(domainPath.Child("chassis", e.name), e.value) {
				entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: e.name, Value: e.value})
			}
		}
		if len(entries) > 0 {
			smbios.Chassis = &libvirtxml.DomainSysInfoChassis{Entry: entries}
		}
	}
	if smbios.System == nil && smbios.Chassis == nil {
		return nil
	}
	os.SMBios = &libvirtxml.DomainSMBios{Mode: "sysinfo"}
	return []libvirtxml.DomainSysInfo{{SMBIOS: smbios}}
}

// console is serial port 0 on a unix socket QEMU listens on, which virt-handler relays to
// `virtctl console` (KubeVirt's virt-serial0), and that QEMU also copies to the log file; plus
// the <console> that points at it. Without a socket path it is a pty (libvirt allocates it;
// libvirtxml says type="pty" with an empty pty source).
func (c *converter) console() ([]libvirtxml.DomainSerial, []libvirtxml.DomainConsole) {
	source := func() *libvirtxml.DomainChardevSource {
		return &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}
	}
	if c.env.SerialSocketPath != "" {
		if path := c.hostFile(field.NewPath("environment", "serialSocketPath"), c.env.SerialSocketPath, "serial socket"); path != "" {
			source = func() *libvirtxml.DomainChardevSource {
				return &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind", Path: path}}
			}
		}
	}
	serial := libvirtxml.DomainSerial{Source: source(), Target: &libvirtxml.DomainSerialTarget{Port: new(uint)}}
	if c.env.SerialLogPath != "" {
		if path := c.hostFile(field.NewPath("environment", "serialLogPath"), c.env.SerialLogPath, "serial log"); path != "" {
			serial.Log = &libvirtxml.DomainChardevLog{File: path, Append: "on"}
		}
	}
	console := libvirtxml.DomainConsole{Source: source(), Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: new(uint)}}
	return []libvirtxml.DomainSerial{serial}, []libvirtxml.DomainConsole{console}
}
