package handler

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestDevicesOf: disks are named by the spec in order, unless the domain's disks do not match
// the spec's one for one; MACs by tap; the machine type as libvirt resolved it.
func TestDevicesOf(t *testing.T) {
	two := `<domain><name>ns_web</name><devices><disk type="file" device="disk"><target dev="vda" bus="virtio"/></disk>
<disk type="file" device="cdrom"><target dev="sda" bus="sata"/></disk></devices></domain>`
	tests := []struct {
		name    string
		xml     string
		drives  map[string]string
		macs    map[string]string
		machine string
	}{
		{"one for one", runningDomainXML, map[string]string{"vda": "root"}, map[string]string{"tap0": "52:54:00:aa:bb:cc"}, ""},
		{"more disks than the spec", two, map[string]string{}, map[string]string{}, ""},
		{"by alias", `<domain><name>ns_web</name><devices><disk type="file" device="disk"><target dev="vdb" bus="virtio"/><alias name="ua-root"/></disk>
<disk type="file" device="cdrom"><target dev="sda" bus="sata"/><alias name="sata0-0-0"/></disk></devices></domain>`, map[string]string{"vdb": "root"}, map[string]string{}, ""},
		{"machine", `<domain><name>ns_web</name><os><type arch="x86_64" machine="pc-q35-7.2">hvm</type></os></domain>`,
			map[string]string{}, map[string]string{}, "pc-q35-7.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d libvirtxml.Domain
			if err := d.Unmarshal(tt.xml); err != nil {
				t.Fatal(err)
			}
			got := devicesOf(&d, newInstance())
			if !maps.Equal(got.drives, tt.drives) || !maps.Equal(got.macs, tt.macs) || got.machine != tt.machine {
				t.Errorf("devices = %+v, want drives %v, macs %v, machine %q", *got, tt.drives, tt.macs, tt.machine)
			}
		})
	}
}

// TestVolumeTargets: each volume gets the target of the disk of its name, "" when no disk
// uses it, keeping what virt-controller said of its claim; gone volumes lose their entry.
func TestVolumeTargets(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.Volumes = []v1.Volume{{Name: "root"}, {Name: "data"}, {Name: "unused"}}
	claim := &v1.PersistentVolumeClaimInfo{ClaimName: "data-claim"}
	vmi.Status.VolumeStatus = []v1.VolumeStatus{{Name: "data", PersistentVolumeClaimInfo: claim}, {Name: "gone", Target: "vdz"}}
	volumeTargets(vmi, map[string]string{"vda": "root", "sda": "data"})
	want := []v1.VolumeStatus{{Name: "root", Target: "vda"}, {Name: "data", Target: "sda", PersistentVolumeClaimInfo: claim}, {Name: "unused"}}
	if diff := cmp.Diff(want, vmi.Status.VolumeStatus); diff != "" {
		t.Errorf("volumeStatus (-want +got):\n%s", diff)
	}
}
