package admission

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestDiskBusOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		disk v1.DiskTarget
		want string // the error, "" for none
	}{
		{"solid-state scsi", v1.DiskTarget{Bus: v1.DiskBusSCSI, SolidState: true}, ""},
		{"solid-state sata", v1.DiskTarget{Bus: v1.DiskBusSATA, SolidState: true}, ""},
		{"solid-state virtio", v1.DiskTarget{Bus: v1.DiskBusVirtio, SolidState: true},
			"disks[0].disk.solidState: Invalid value: true: only a scsi or sata disk can be solid-state"},
		{"solid-state, bus left to the node", v1.DiskTarget{SolidState: true}, ""},
		{"virtio pci address", v1.DiskTarget{Bus: v1.DiskBusVirtio, PciAddress: "0000:81:01.0"}, ""},
		{"sata pci address", v1.DiskTarget{Bus: v1.DiskBusSATA, PciAddress: "0000:81:01.0"},
			`disks[0].disk.pciAddress: Invalid value: "0000:81:01.0": only a virtio disk`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := diskBusOptions(field.NewPath("disks"), []v1.Disk{{Name: "d", DiskDevice: v1.DiskDevice{Disk: &tc.disk}}})
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("unexpected error: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
}
