// Package domain turns a VirtualMachineInstance into libvirt domain XML. It is pure: the
// node resolves paths and network plumbing first (Environment), and Convert only checks and
// translates, so everything here is testable without libvirt.
package domain

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// defaultMachine is the machine type when the spec names none: q35 gives PCIe and SATA
// (AHCI), which the disk buses rely on.
const defaultMachine = "q35"

var machineRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// Convert builds the domain of vmi. Invalid or unsupported input gives an error naming
// every offending field; Convert never panics.
func Convert(vmi *v1.VirtualMachineInstance, env Environment) (*Domain, error) {
	if vmi == nil {
		return nil, fmt.Errorf("no VirtualMachineInstance to convert")
	}
	if env.DomainType != TypeKVM && env.DomainType != TypeQEMU {
		return nil, fmt.Errorf("domain type %q: want %q or %q", env.DomainType, TypeKVM, TypeQEMU)
	}
	c := &converter{vmi: vmi, env: env}
	d := &Domain{
		Type:       env.DomainType,
		Name:       c.name(),
		UUID:       c.uuid(),
		OS:         c.os(),
		Features:   Features{ACPI: &struct{}{}, APIC: &struct{}{}},
		OnPoweroff: "destroy",
		OnReboot:   "restart",
		OnCrash:    "destroy",
	}
	kib := c.memoryKiB()
	d.Memory = Memory{Unit: "KiB", Value: kib}
	d.CurrentMemory = d.Memory
	d.VCPU, d.CPU = c.cpu()
	d.SysInfo = c.sysInfo(&d.OS)
	d.Devices.Controllers, d.Devices.Disks = c.disks()
	d.Devices.Interfaces, d.QEMUCommand = c.interfaces()
	d.Devices.Serials, d.Devices.Consoles = c.console()
	if len(c.errs) > 0 {
		return nil, c.errs.ToAggregate()
	}
	return d, nil
}

// Marshal renders the domain as indented XML, the form libvirt's DefineXML takes.
func (d *Domain) Marshal() ([]byte, error) {
	out, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

type converter struct {
	vmi  *v1.VirtualMachineInstance
	env  Environment
	errs field.ErrorList
}

var (
	specPath   = field.NewPath("spec")
	domainPath = specPath.Child("domain")
)

func (c *converter) fail(err *field.Error) { c.errs = append(c.errs, err) }

// text rejects what XML cannot carry (invalid UTF-8, control characters other than tab and
// newlines): encoding/xml would silently replace them, so the guest would get a different
// string than the spec asked for.
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
func (c *converter) os() OS {
	machine := defaultMachine
	if m := c.vmi.Spec.Domain.Machine; m != nil && m.Type != "" {
		machine = m.Type
		if !machineRE.MatchString(machine) {
			c.fail(field.Invalid(domainPath.Child("machine", "type"), machine, "must be a QEMU machine type such as q35"))
		}
	}
	os := OS{Type: OSType{Arch: "x86_64", Machine: machine, Value: "hvm"}}
	fw := c.vmi.Spec.Domain.Firmware
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
		os.Cmdline = kb.KernelArgs
	}
	return os
}

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

// sysInfo passes the firmware serial number to the guest's SMBIOS table.
func (c *converter) sysInfo(os *OS) *SysInfo {
	fw := c.vmi.Spec.Domain.Firmware
	if fw == nil || fw.Serial == "" || !c.text(domainPath.Child("firmware", "serial"), fw.Serial) {
		return nil
	}
	os.SMBIOS = &SMBIOS{Mode: "sysinfo"}
	return &SysInfo{Type: "smbios", System: []SysEntries{{Entries: []SysEntry{{Name: "serial", Value: fw.Serial}}}}}
}

// console is serial port 0 as a pty (for virsh console) that QEMU also copies to the log
// file, plus the <console> libvirt's console API attaches to.
func (c *converter) console() ([]Serial, []Console) {
	serial := Serial{Type: "pty", Target: &SerialTarget{Port: 0}}
	if c.env.SerialLogPath != "" {
		if path := c.hostFile(field.NewPath("environment", "serialLogPath"), c.env.SerialLogPath, "serial log"); path != "" {
			serial.Log = &Log{File: path, Append: "on"}
		}
	}
	return []Serial{serial}, []Console{{Type: "pty", Target: &SerialTarget{Type: "serial", Port: 0}}}
}
