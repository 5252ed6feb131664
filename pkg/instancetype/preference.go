package instancetype

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// ApplyPreference fills each field the preference prefers where the spec leaves it unset: a
// preference never overrides what the user wrote. Applying it again changes nothing but
// what was unset in between (the pod network interface defaulting adds, say).
func ApplyPreference(pref *itv1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec, meta *metav1.ObjectMeta) {
	if pref == nil {
		return
	}
	d := &spec.Domain
	if pref.CPU != nil && len(pref.CPU.PreferredCPUFeatures) > 0 {
		if d.CPU == nil {
			d.CPU = &v1.CPU{}
		}
		have := map[string]bool{}
		for _, f := range d.CPU.Features {
			have[f.Name] = true
		}
		for _, f := range pref.CPU.PreferredCPUFeatures {
			if !have[f.Name] {
				d.CPU.Features = append(d.CPU.Features, f)
			}
		}
	}
	applyDevicePreferences(pref.Devices, &d.Devices)
	applyFeaturePreferences(pref.Features, d)
	applyFirmwarePreferences(pref.Firmware, d)
	if m := pref.Machine; m != nil && m.PreferredMachineType != "" {
		if d.Machine == nil {
			d.Machine = &v1.Machine{}
		}
		if d.Machine.Type == "" {
			d.Machine.Type = m.PreferredMachineType
		}
	}
	applyClockPreferences(pref.Clock, d)
	if pref.PreferredSubdomain != nil && spec.Subdomain == "" {
		spec.Subdomain = *pref.PreferredSubdomain
	}
	if pref.PreferredTerminationGracePeriodSeconds != nil && spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To(*pref.PreferredTerminationGracePeriodSeconds)
	}
	if pref.PreferredArchitecture != nil && spec.Architecture == "" {
		spec.Architecture = *pref.PreferredArchitecture
	}
	for k, v := range pref.Annotations {
		if _, ok := meta.Annotations[k]; !ok {
			if meta.Annotations == nil {
				meta.Annotations = map[string]string{}
			}
			meta.Annotations[k] = v
		}
	}
}

func applyFeaturePreferences(p *itv1beta1.FeaturePreferences, d *v1.DomainSpec) {
	if p == nil {
		return
	}
	if d.Features == nil {
		d.Features = &v1.Features{}
	}
	f := d.Features
	// acpi is a value, not a pointer, in KubeVirt's API too: unset is enabled == nil.
	if p.PreferredAcpi != nil && f.ACPI.Enabled == nil {
		f.ACPI = *p.PreferredAcpi.DeepCopy()
	}
	if p.PreferredApic != nil && f.APIC == nil {
		f.APIC = p.PreferredApic.DeepCopy()
	}
	if p.PreferredHyperv != nil && f.Hyperv == nil {
		f.Hyperv = p.PreferredHyperv.DeepCopy()
	}
	if p.PreferredKvm != nil && f.KVM == nil {
		f.KVM = p.PreferredKvm.DeepCopy()
	}
	if p.PreferredPvspinlock != nil && f.Pvspinlock == nil {
		f.Pvspinlock = p.PreferredPvspinlock.DeepCopy()
	}
	if p.PreferredSmm != nil && f.SMM == nil {
		f.SMM = p.PreferredSmm.DeepCopy()
	}
}

// applyFirmwarePreferences picks the bootloader only when the spec picks none; preferredEfi
// wins over the deprecated preferredUseEfi and preferredUseSecureBoot, as in KubeVirt.
func applyFirmwarePreferences(p *itv1beta1.FirmwarePreferences, d *v1.DomainSpec) {
	if p == nil {
		return
	}
	if d.Firmware == nil {
		d.Firmware = &v1.Firmware{}
	}
	fw := d.Firmware
	if fw.Bootloader == nil {
		fw.Bootloader = &v1.Bootloader{}
	}
	b := fw.Bootloader
	chosen := b.BIOS != nil || b.EFI != nil
	switch {
	case !chosen && p.PreferredUseBios != nil && *p.PreferredUseBios:
		b.BIOS = &v1.BIOS{}
	case !chosen && p.PreferredEfi != nil:
		b.EFI = p.PreferredEfi.DeepCopy()
	case !chosen && p.DeprecatedPreferredUseEfi != nil && *p.DeprecatedPreferredUseEfi:
		b.EFI = &v1.EFI{}
		if p.DeprecatedPreferredUseSecureBoot != nil {
			b.EFI.SecureBoot = ptr.To(*p.DeprecatedPreferredUseSecureBoot)
		}
	}
	if p.PreferredUseBiosSerial != nil && b.BIOS != nil && b.BIOS.UseSerial == nil {
		b.BIOS.UseSerial = ptr.To(*p.PreferredUseBiosSerial)
	}
	if p.PreferredEfi == nil && p.DeprecatedPreferredUseSecureBoot != nil && b.EFI != nil && b.EFI.SecureBoot == nil {
		b.EFI.SecureBoot = ptr.To(*p.DeprecatedPreferredUseSecureBoot)
	}
	if b.BIOS == nil && b.EFI == nil {
		fw.Bootloader = nil // nothing chosen: leave the spec as it was
	}
	if equality.Semantic.DeepEqual(*fw, v1.Firmware{}) {
		d.Firmware = nil
	}
}

func applyClockPreferences(p *itv1beta1.ClockPreferences, d *v1.DomainSpec) {
	if p == nil || (p.PreferredClockOffset == nil && p.PreferredTimer == nil) {
		return
	}
	if d.Clock == nil {
		d.Clock = &v1.Clock{}
	}
	c := d.Clock
	if p.PreferredClockOffset != nil && c.UTC == nil && c.Timezone == nil {
		c.ClockOffset = *p.PreferredClockOffset.DeepCopy()
	}
	if p.PreferredTimer != nil && c.Timer == nil {
		c.Timer = p.PreferredTimer.DeepCopy()
	}
}
