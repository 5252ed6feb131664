package guestagent

import (
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
	"github.com/google/go-cmp/cmp"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func params(kv ...any) []libvirt.TypedParam {
	var out []libvirt.TypedParam
	for i := 0; i < len(kv); i += 2 {
		out = append(out, libvirt.TypedParam{Field: kv[i].(string), Value: libvirt.TypedParamValue{I: kv[i+1]}})
	}
	return out
}

func TestParse(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	for name, tc := range map[string]struct {
		in   []libvirt.TypedParam
		want Report
	}{
		"nothing": {nil, Report{}},
		"what the testguest's agent says": {
			params("hostname", "agent1", "timezone.name", "UTC", "timezone.offset", int32(0),
				"os.id", "vmctl-testguest", "os.name", "vmctl testguest", "os.pretty-name", "vmctl testguest (busybox)",
				"os.version", "1 (busybox)", "os.version-id", "1", "os.machine", "x86_64",
				"os.kernel-release", "6.1.0-57-cloud-amd64", "os.kernel-version", "#1 SMP",
				"user.count", uint32(0),
				"if.count", uint32(2), "if.0.name", "lo", "if.0.hwaddr", "00:00:00:00:00:00", "if.0.addr.count", uint32(1),
				"if.0.addr.0.type", "ipv4", "if.0.addr.0.addr", "127.0.0.1", "if.0.addr.0.prefix", uint32(8),
				"if.1.name", "eth0", "if.1.hwaddr", "52:54:00:AA:BB:CC", "if.1.addr.count", uint32(1), "if.1.addr.0.addr", "10.0.2.2"),
			Report{
				Hostname: "agent1", Timezone: "UTC",
				OS: v1.VirtualMachineInstanceGuestOSInfo{ID: "vmctl-testguest", Name: "vmctl testguest", PrettyName: "vmctl testguest (busybox)",
					Version: "1 (busybox)", VersionID: "1", Machine: "x86_64", KernelRelease: "6.1.0-57-cloud-amd64", KernelVersion: "#1 SMP"},
				Interfaces: []Interface{{Name: "lo", MAC: "00:00:00:00:00:00", Addrs: []string{"127.0.0.1"}}, {Name: "eth0", MAC: "52:54:00:aa:bb:cc", Addrs: []string{"10.0.2.2"}}},
			},
		},
		"users and file systems": {
			params("user.count", uint32(1), "user.0.name", "debian", "user.0.login-time", uint64(1700000000500),
				"fs.count", uint32(1), "fs.0.name", "vda1", "fs.0.mountpoint", "/", "fs.0.fstype", "ext4",
				"fs.0.used-bytes", uint64(1000), "fs.0.total-bytes", uint64(4000),
				"fs.0.disk.count", uint32(1), "fs.0.disk.0.alias", "vda", "fs.0.disk.0.serial", "root"),
			Report{
				Users: []v1.VirtualMachineInstanceGuestOSUser{{UserName: "debian", LoginTime: 1700000000.5}},
				Filesystems: []v1.VirtualMachineInstanceFileSystem{{DiskName: "vda1", MountPoint: "/", FileSystemType: "ext4", UsedBytes: 1000, TotalBytes: 4000,
					Disk: []v1.VirtualMachineInstanceFileSystemDisk{{Serial: "root", BusType: "vda"}}}},
			},
		},
		"a guest that says too much": {
			params("hostname", long, "user.count", uint32(100000), "os.id", "a\xffb"),
			Report{Hostname: strings.Repeat("é", 128), OS: v1.VirtualMachineInstanceGuestOSInfo{ID: "ab"},
				Users: make([]v1.VirtualMachineInstanceGuestOSUser, maxItems)},
		},
		"fields of the wrong type": {
			params("hostname", int32(3), "user.count", "many", "if.count", int64(-1)),
			Report{},
		},
		"no timezone name": {params("timezone.offset", int32(3600)), Report{Timezone: "UTC+1"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Parse(tc.in)); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmptyListsAreLists(t *testing.T) {
	var r Report
	if r.UserList().Items == nil || r.FileSystemList().Items == nil || r.AgentInfo().FSInfo.Filesystems == nil {
		t.Error("an empty report gives a nil list, which JSON says as null")
	}
}
