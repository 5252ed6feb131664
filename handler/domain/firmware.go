package domain

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

var bootloaderPath = domainPath.Child("firmware", "bootloader")

// bootloader picks the guest's firmware. BIOS is QEMU's default, SeaBIOS; useSerial also
// prints its messages on the serial console. EFI is OVMF with a variable store in the pod,
// made from OVMF's template at the first start: KubeVirt's non-persistent EFI. Secure boot,
// KubeVirt's default for EFI, loads the signature-enforcing build with Microsoft's keys
// enrolled and needs SMM, which only q35 emulates.
func (c *converter) bootloader(os *libvirtxml.DomainOS, machine string, b *v1.Bootloader) {
	switch {
	case b.BIOS != nil && b.EFI != nil:
		c.fail(field.Invalid(bootloaderPath, "bios and efi", "set bios or efi, not both"))
	case b.BIOS != nil:
		if b.BIOS.UseSerial != nil && *b.BIOS.UseSerial {
			os.BIOS = &libvirtxml.DomainBIOS{UseSerial: "yes"}
		}
	case b.EFI != nil:
		p := bootloaderPath.Child("efi")
		// A persistent store's path is in the VM's state claim (the node's environment says).
		nvram := c.hostFile(field.NewPath("environment", "nvramPath"), c.env.NVRAMPath, "EFI variable store")
		if nvram == "" {
			return
		}
		code, vars, secure := layout.OVMFCode, layout.OVMFVars, "no"
		if b.EFI.SecureBoot == nil || *b.EFI.SecureBoot {
			if !strings.HasPrefix(machine, "q35") && !strings.HasPrefix(machine, "pc-q35") {
				c.fail(field.Invalid(p.Child("secureBoot"), true, "secure boot needs SMM, which only the q35 machine type has; set secureBoot: false or machine q35"))
				return
			}
			code, vars, secure = layout.OVMFSecureCode, layout.OVMFSecureVars, "yes"
		}
		os.Loader = &libvirtxml.DomainLoader{Path: code, Readonly: "yes", Secure: secure, Type: "pflash"}
		os.NVRam = &libvirtxml.DomainNVRam{NVRam: nvram, Template: vars}
	}
}

// needsSMM says whether the domain must emulate System Management Mode: secure boot's
// firmware refuses to run without it.
func needsSMM(fw *v1.Firmware) bool {
	if fw == nil || fw.Bootloader == nil || fw.Bootloader.EFI == nil {
		return false
	}
	sb := fw.Bootloader.EFI.SecureBoot
	return sb == nil || *sb
}
