// Package guestagent reads what a guest's QEMU guest agent reports through libvirt
// (virDomainGetGuestInfo's typed parameters) into KubeVirt's types. The guest writes all of
// it, so every string and every list is bounded: a guest cannot grow its instance's status or
// an answer of virt-api beyond a few KiB per item.
package guestagent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/digitalocean/go-libvirt"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Bounds on what a guest reports.
const (
	maxString = 256
	maxItems  = 64
)

// Types are the groups a Report asks libvirt for.
const Types = libvirt.DomainGuestInfoUsers | libvirt.DomainGuestInfoOs | libvirt.DomainGuestInfoTimezone |
	libvirt.DomainGuestInfoHostname | libvirt.DomainGuestInfoFilesystem | libvirt.DomainGuestInfoInterfaces

// Report is one answer of the guest's agent.
type Report struct {
	Hostname    string
	Timezone    string
	OS          v1.VirtualMachineInstanceGuestOSInfo
	Users       []v1.VirtualMachineInstanceGuestOSUser
	Filesystems []v1.VirtualMachineInstanceFileSystem
	Interfaces  []Interface
}

// Interface is a guest network interface: its name in the guest, MAC and addresses.
type Interface struct {
	Name  string
	MAC   string
	Addrs []string
}

// Parse sorts libvirt's typed parameters into a Report.
func Parse(params []libvirt.TypedParam) Report {
	f := fields{}
	for _, p := range params {
		f[p.Field] = p.Value.I
	}
	tz := f.str("timezone.name")
	if off, ok := f["timezone.offset"].(int32); ok && tz == "" {
		tz = fmt.Sprintf("UTC%+d", off/3600)
	}
	r := Report{
		Hostname: f.str("hostname"),
		Timezone: tz,
		OS: v1.VirtualMachineInstanceGuestOSInfo{
			Name: f.str("os.name"), KernelRelease: f.str("os.kernel-release"), Version: f.str("os.version"),
			PrettyName: f.str("os.pretty-name"), VersionID: f.str("os.version-id"),
			KernelVersion: f.str("os.kernel-version"), Machine: f.str("os.machine"), ID: f.str("os.id"),
		},
	}
	for i := range f.count("user.count") {
		p := "user." + strconv.Itoa(i)
		r.Users = append(r.Users, v1.VirtualMachineInstanceGuestOSUser{
			UserName: f.str(p + ".name"), Domain: f.str(p + ".domain"), LoginTime: float64(f.uint(p+".login-time")) / 1000,
		})
	}
	for i := range f.count("fs.count") {
		p := "fs." + strconv.Itoa(i)
		fs := v1.VirtualMachineInstanceFileSystem{
			DiskName: f.str(p + ".name"), MountPoint: f.str(p + ".mountpoint"), FileSystemType: f.str(p + ".fstype"),
			UsedBytes: int(f.uint(p + ".used-bytes")), TotalBytes: int(f.uint(p + ".total-bytes")),
		}
		for j := range f.count(p + ".disk.count") {
			d := p + ".disk." + strconv.Itoa(j)
			// libvirt names the domain's disk (alias: vda) when it knows it, else the guest's device.
			bus := f.str(d + ".alias")
			if bus == "" {
				bus = f.str(d + ".device")
			}
			fs.Disk = append(fs.Disk, v1.VirtualMachineInstanceFileSystemDisk{Serial: f.str(d + ".serial"), BusType: bus})
		}
		r.Filesystems = append(r.Filesystems, fs)
	}
	for i := range f.count("if.count") {
		p := "if." + strconv.Itoa(i)
		iface := Interface{Name: f.str(p + ".name"), MAC: strings.ToLower(f.str(p + ".hwaddr"))}
		for j := range f.count(p + ".addr.count") {
			a := p + ".addr." + strconv.Itoa(j)
			if addr := f.str(a + ".addr"); addr != "" {
				iface.Addrs = append(iface.Addrs, addr)
			}
		}
		r.Interfaces = append(r.Interfaces, iface)
	}
	return r
}

// fields are typed parameters by name.
type fields map[string]any

// str is a string field, cut to maxString bytes, without invalid UTF-8 (a rune the cut split
// included).
func (f fields) str(name string) string {
	s, _ := f[name].(string)
	return strings.ToValidUTF8(s[:min(len(s), maxString)], "")
}

func (f fields) uint(name string) uint64 {
	switch v := f[name].(type) {
	case uint64:
		return v
	case int64:
		if v > 0 {
			return uint64(v)
		}
	case uint32:
		return uint64(v)
	case int32:
		if v > 0 {
			return uint64(v)
		}
	}
	return 0
}

// count is a ".count" field, at most maxItems.
func (f fields) count(name string) int {
	return int(min(f.uint(name), maxItems))
}

// AgentInfo is the report as the guestosinfo subresource answers it.
func (r Report) AgentInfo() v1.VirtualMachineInstanceGuestAgentInfo {
	return v1.VirtualMachineInstanceGuestAgentInfo{
		Hostname: r.Hostname, OS: r.OS, Timezone: r.Timezone, UserList: r.Users,
		FSInfo: v1.VirtualMachineInstanceFileSystemInfo{Filesystems: nonNil(r.Filesystems)},
	}
}

// UserList is the report's users as the userlist subresource answers them.
func (r Report) UserList() v1.VirtualMachineInstanceGuestOSUserList {
	return v1.VirtualMachineInstanceGuestOSUserList{Items: nonNil(r.Users)}
}

// FileSystemList is the report's file systems as the filesystemlist subresource answers them.
func (r Report) FileSystemList() v1.VirtualMachineInstanceFileSystemList {
	return v1.VirtualMachineInstanceFileSystemList{Items: nonNil(r.Filesystems)}
}

// nonNil makes an empty list say [] in JSON, not null.
func nonNil[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}
