package domain

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"
)

// virtiofsQueueSize is the request queue of each virtiofs device, KubeVirt's.
const virtiofsQueueSize = 1024

// filesystems shows the guest each filesystem through virtiofs: a vhost-user-fs device
// connected to the virtiofsd its launcher pod runs for it (env.VirtiofsSockets), its tag the
// filesystem's name (`mount -t virtiofs NAME /mnt` in the guest).
func (c *converter) filesystems() []libvirtxml.DomainFilesystem {
	var out []libvirtxml.DomainFilesystem
	for i, fs := range c.vmi.Spec.Domain.Devices.Filesystems {
		socket := c.env.VirtiofsSockets[fs.Name]
		if socket == "" {
			c.fail(field.Invalid(domainPath.Child("devices", "filesystems").Index(i).Child("name"), fs.Name, "no virtiofsd serves this filesystem in the launcher pod"))
			continue
		}
		out = append(out, libvirtxml.DomainFilesystem{
			Driver: &libvirtxml.DomainFilesystemDriver{Type: "virtiofs", Queue: virtiofsQueueSize},
			Source: &libvirtxml.DomainFilesystemSource{Mount: &libvirtxml.DomainFilesystemSourceMount{Socket: socket}},
			Target: &libvirtxml.DomainFilesystemTarget{Dir: fs.Name},
		})
	}
	return out
}

// sharedMemory: virtiofsd reads and writes the guest's buffers in place (vhost-user), so the
// guest's RAM must be memory another process can map: a memfd unless it is in huge pages.
func sharedMemory(m *libvirtxml.DomainMemoryBacking) *libvirtxml.DomainMemoryBacking {
	if m == nil {
		m = &libvirtxml.DomainMemoryBacking{MemorySource: &libvirtxml.DomainMemorySource{Type: "memfd"}}
	}
	m.MemoryAccess = &libvirtxml.DomainMemoryAccess{Mode: "shared"}
	return m
}
