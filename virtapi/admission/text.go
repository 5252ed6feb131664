package admission

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// The node's own syntax checks (handler/domain), repeated here so the user hears of them
// when applying rather than from the instance's events.
var (
	// diskSerialRE is what libvirt accepts in a disk's <serial>.
	diskSerialRE = regexp.MustCompile(`^[A-Za-z0-9_ .+-]*$`)
	// machineRE is a QEMU machine type name.
	machineRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
)

// badText says why s cannot go into the libvirt domain XML or onto the kernel command line,
// or "" when it can: invalid UTF-8, a control character (every byte below 0x20, tab and
// newline included, and 0x7f: XML 1.0 cannot carry most of them, encoding/xml would silently
// replace them, and on a command line they split or end it), or U+FFFE/U+FFFF, which XML
// cannot carry either. Offsets are 0-based byte offsets. In practice invalid UTF-8 arrives
// as U+FFFD, since JSON decoding replaces it; the check is for callers with raw strings.
func badText(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("must be valid UTF-8 (invalid byte 0x%02x at byte %d)", s[i], i)
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("must not contain control characters (found 0x%02x at byte %d)", r, i)
		case r == 0xFFFE || r == 0xFFFF:
			return fmt.Sprintf("must not contain the non-character %U (at byte %d)", r, i)
		}
		i += size
	}
	return ""
}

// textChecker collects the errors of the strings it checks.
type textChecker struct{ errs field.ErrorList }

// ok checks s at p and says whether it is clean, recording why not.
func (c *textChecker) ok(p *field.Path, s string) bool {
	if why := badText(s); why != "" {
		c.errs = append(c.errs, field.Invalid(p, s, why))
		return false
	}
	return true
}

func (c *textChecker) add(e *field.Error) { c.errs = append(c.errs, e) }

// domainText checks every user string the node writes into the domain XML, onto the kernel
// command line or into the launcher pod's arguments (handler/domain, controller/vmi/layout.go):
// firmware UUID and serial, kernelBoot arguments and paths, disk serials, CPU model, machine
// type, hostname and containerDisk paths. Names are DNS labels, checked elsewhere; NIC
// models, MACs and CIDRs are parsed or enumerated, and cloud-init data goes into an ISO
// where newlines belong.
func domainText(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	c := &textChecker{}
	d, dp := &spec.Domain, path.Child("domain")
	c.ok(path.Child("hostname"), spec.Hostname)
	if fw := d.Firmware; fw != nil {
		fp := dp.Child("firmware")
		c.ok(fp.Child("serial"), fw.Serial)
		if id := string(fw.UUID); id != "" && c.ok(fp.Child("uuid"), id) {
			if _, err := uuid.Parse(id); err != nil {
				c.add(field.Invalid(fp.Child("uuid"), id, "must be a UUID: "+err.Error()))
			}
		}
		kernelBoot(c, fp.Child("kernelBoot"), fw.KernelBoot)
	}
	if d.CPU != nil {
		c.ok(dp.Child("cpu", "model"), d.CPU.Model)
	}
	if m := d.Machine; m != nil && m.Type != "" && c.ok(dp.Child("machine", "type"), m.Type) && !machineRE.MatchString(m.Type) {
		c.add(field.Invalid(dp.Child("machine", "type"), m.Type, "must be a QEMU machine type such as q35"))
	}
	for i, disk := range d.Devices.Disks {
		p := dp.Child("devices", "disks").Index(i).Child("serial")
		if c.ok(p, disk.Serial) && !diskSerialRE.MatchString(disk.Serial) {
			c.add(field.Invalid(p, disk.Serial, "may only contain letters, digits, spaces and _ . + -"))
		}
	}
	for i, v := range spec.Volumes {
		if v.ContainerDisk != nil {
			c.ok(path.Child("volumes").Index(i).Child("containerDisk", "path"), v.ContainerDisk.Path)
		}
	}
	return c.errs
}

// kernelBoot checks the command line and paths, and what QEMU needs of them: a kernel for an
// initrd (it refuses -initrd alone) and for arguments.
func kernelBoot(c *textChecker, p *field.Path, kb *v1.KernelBoot) {
	if kb == nil {
		return
	}
	c.ok(p.Child("kernelArgs"), kb.KernelArgs)
	ctr := kb.Container
	if ctr == nil {
		if kb.KernelArgs != "" {
			c.add(field.Required(p.Child("container"), "kernelArgs need a kernel from a container"))
		}
		return
	}
	cp := p.Child("container")
	c.ok(cp.Child("kernelPath"), ctr.KernelPath)
	c.ok(cp.Child("initrdPath"), ctr.InitrdPath)
	if ctr.KernelPath == "" && ctr.InitrdPath != "" {
		c.add(field.Required(cp.Child("kernelPath"), "an initrd needs a kernel: QEMU refuses -initrd without -kernel"))
	}
}
