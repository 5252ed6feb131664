package instancetype

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestPreferencesFillOnlyWhatIsUnset: each preference sets its field on an empty spec and
// leaves a spec that already has it as it was.
func TestPreferencesFillOnlyWhatIsUnset(t *testing.T) {
	tests := []struct {
		name  string
		pref  itv1beta1.VirtualMachinePreferenceSpec
		empty v1.VirtualMachineInstanceSpec // before
		want  v1.VirtualMachineInstanceSpec // after, from empty
		set   v1.VirtualMachineInstanceSpec // already set: unchanged
	}{
		{
			name:  "disk bus",
			pref:  itv1beta1.VirtualMachinePreferenceSpec{Devices: &itv1beta1.DevicePreferences{PreferredDiskBus: v1.DiskBusSATA}},
			empty: specWithDisks(v1.Disk{Name: "root"}),
			want:  specWithDisks(v1.Disk{Name: "root", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSATA}}}),
			set:   specWithDisks(v1.Disk{Name: "root", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}),
		},
		{
			name:  "cdrom bus",
			pref:  itv1beta1.VirtualMachinePreferenceSpec{Devices: &itv1beta1.DevicePreferences{PreferredCdromBus: v1.DiskBusSCSI}},
			empty: specWithDisks(v1.Disk{Name: "cd", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{}}}),
			want:  specWithDisks(v1.Disk{Name: "cd", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI}}}),
			set:   specWithDisks(v1.Disk{Name: "cd", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA}}}),
		},
		{
			name:  "interface model",
			pref:  itv1beta1.VirtualMachinePreferenceSpec{Devices: &itv1beta1.DevicePreferences{PreferredInterfaceModel: "virtio"}},
			empty: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default"}}}}},
			want:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default", Model: "virtio"}}}}},
			set:   v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default", Model: "e1000"}}}}},
		},
		{
			name: "rng and autoattach",
			pref: itv1beta1.VirtualMachinePreferenceSpec{Devices: &itv1beta1.DevicePreferences{
				PreferredRng: &v1.Rng{}, PreferredAutoattachPodInterface: ptr.To(false)}},
			want: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Rng: &v1.Rng{}, AutoattachPodInterface: ptr.To(false)}}},
			set:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Rng: &v1.Rng{}, AutoattachPodInterface: ptr.To(true)}}},
		},
		{
			name: "efi",
			pref: itv1beta1.VirtualMachinePreferenceSpec{Firmware: &itv1beta1.FirmwarePreferences{
				DeprecatedPreferredUseEfi: ptr.To(true), DeprecatedPreferredUseSecureBoot: ptr.To(false)}},
			want: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}}}},
			set:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{Bootloader: &v1.Bootloader{BIOS: &v1.BIOS{}}}}},
		},
		{
			name: "machine type",
			pref: itv1beta1.VirtualMachinePreferenceSpec{Machine: &itv1beta1.MachinePreferences{PreferredMachineType: "pc-q35-7.2"}},
			want: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Machine: &v1.Machine{Type: "pc-q35-7.2"}}},
			set:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Machine: &v1.Machine{Type: "q35"}}},
		},
		{
			name: "grace period and subdomain",
			pref: itv1beta1.VirtualMachinePreferenceSpec{PreferredTerminationGracePeriodSeconds: ptr.To[int64](5), PreferredSubdomain: ptr.To("sub")},
			want: v1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr.To[int64](5), Subdomain: "sub"},
			set:  v1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Subdomain: "mine"},
		},
		{
			name: "clock",
			pref: itv1beta1.VirtualMachinePreferenceSpec{Clock: &itv1beta1.ClockPreferences{PreferredClockOffset: &v1.ClockOffset{UTC: &v1.ClockOffsetUTC{}}}},
			want: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Clock: &v1.Clock{ClockOffset: v1.ClockOffset{UTC: &v1.ClockOffsetUTC{}}}}},
			set:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Clock: &v1.Clock{ClockOffset: v1.ClockOffset{Timezone: ptr.To(v1.ClockOffsetTimezone("Europe/Paris"))}}}},
		},
		{
			name: "smm feature",
			pref: itv1beta1.VirtualMachinePreferenceSpec{Features: &itv1beta1.FeaturePreferences{PreferredSmm: &v1.FeatureState{}}},
			want: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{SMM: &v1.FeatureState{}}}},
			set:  v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{SMM: &v1.FeatureState{Enabled: ptr.To(false)}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.empty.DeepCopy()
			ApplyPreference(&tt.pref, got, &metav1.ObjectMeta{})
			if !equality.Semantic.DeepEqual(*got, tt.want) {
				t.Errorf("from empty:\n got %+v\nwant %+v", got.Domain, tt.want.Domain)
			}
			set := tt.set.DeepCopy()
			ApplyPreference(&tt.pref, set, &metav1.ObjectMeta{})
			if !equality.Semantic.DeepEqual(*set, tt.set) {
				t.Errorf("overrode the user's value:\n got %+v\nwant %+v", set.Domain, tt.set.Domain)
			}
		})
	}
}

func TestPreferenceAnnotationsNeverOverride(t *testing.T) {
	meta := &metav1.ObjectMeta{Annotations: map[string]string{"a": "mine"}}
	ApplyPreference(&itv1beta1.VirtualMachinePreferenceSpec{Annotations: map[string]string{"a": "theirs", "b": "theirs"}}, &v1.VirtualMachineInstanceSpec{}, meta)
	if meta.Annotations["a"] != "mine" || meta.Annotations["b"] != "theirs" {
		t.Errorf("annotations %v", meta.Annotations)
	}
}

func specWithDisks(disks ...v1.Disk) v1.VirtualMachineInstanceSpec {
	return v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{Disks: disks}}}
}
