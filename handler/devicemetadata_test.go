package handler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
)

func TestDeviceMetadata(t *testing.T) {
	configDrive := v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{CloudInitConfigDrive: &v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}}}
	// dom is what the converter makes of newInstance plus a SATA data disk and the drive.
	dom := &libvirtxml.Domain{Name: "ns_web", UUID: "5a9fc181-957e-5c32-9e5a-2de5e9673531", Devices: &libvirtxml.DomainDeviceList{
		Interfaces: []libvirtxml.DomainInterface{{
			Source: &libvirtxml.DomainInterfaceSource{Ethernet: &libvirtxml.DomainInterfaceSourceEthernet{}},
			MAC:    &libvirtxml.DomainInterfaceMAC{Address: "02:00:00:00:00:01"},
		}},
		Disks: []libvirtxml.DomainDisk{
			{Alias: &libvirtxml.DomainAlias{Name: domain.DiskAliasPrefix + "root"}, Target: &libvirtxml.DomainDiskTarget{Bus: "virtio"}, Serial: "root-1"},
			{Alias: &libvirtxml.DomainAlias{Name: domain.DiskAliasPrefix + "data"}, Target: &libvirtxml.DomainDiskTarget{Bus: "sata"}},
			{Alias: &libvirtxml.DomainAlias{Name: domain.DiskAliasPrefix + "cfg"}, Target: &libvirtxml.DomainDiskTarget{Bus: "sata"}},
		},
	}}
	for _, tc := range []struct {
		name       string
		nicTag     string
		diskTags   map[string]string
		noDrive    bool
		extraIface bool // a spec interface the domain has no NIC for
		want       []DeviceData
	}{
		{name: "nothing tagged"},
		{name: "tags without a config drive", nicTag: "front", noDrive: true},
		{
			name: "a tagged NIC", nicTag: "front",
			want: []DeviceData{{Type: deviceNIC, Bus: "pci", Address: "0000:01:00.0", MAC: "02:00:00:00:00:01", Tags: []string{"front"}}},
		},
		{
			name: "tagged virtio and SATA disks", diskTags: map[string]string{"root": "boot", "data": "scratch"},
			want: []DeviceData{
				{Type: deviceDisk, Bus: "pci", Address: "0000:10:00.0", Serial: "root-1", Tags: []string{"boot"}},
				{Type: deviceDisk, Bus: "sata", Address: "0:0:0:1", Tags: []string{"scratch"}},
			},
		},
		{
			name: "interfaces the domain does not match one to one are left out", nicTag: "front", extraIface: true,
			diskTags: map[string]string{"data": "scratch"},
			want:     []DeviceData{{Type: deviceDisk, Bus: "sata", Address: "0:0:0:1", Tags: []string{"scratch"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			devs := &vmi.Spec.Domain.Devices
			devs.Interfaces[0].Tag = tc.nicTag
			if tc.extraIface {
				devs.Interfaces = append(devs.Interfaces, v1.Interface{Name: "second", Tag: "back"})
			}
			devs.Disks = append(devs.Disks, v1.Disk{Name: "data"}, v1.Disk{Name: "cfg"})
			for i := range devs.Disks {
				devs.Disks[i].Tag = tc.diskTags[devs.Disks[i].Name]
			}
			if !tc.noDrive {
				vmi.Spec.Volumes = append(vmi.Spec.Volumes, configDrive)
			}
			lv := newFakeLibvirt()
			var got []DeviceData
			if needsDeviceMetadata(vmi) {
				var err error
				if got, err = deviceMetadata(vmi, dom, lv); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			wantProbes := []string{"ns_web-addresses"}
			if tc.nicTag == "" && tc.diskTags == nil || tc.noDrive {
				wantProbes = nil // nothing needs an address: libvirt is not asked
			}
			if diff := cmp.Diff(wantProbes, lv.probes); diff != "" {
				t.Errorf("probed domains (-want +got):\n%s", diff)
			}
		})
	}
}
