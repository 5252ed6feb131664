package domain

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// features turns spec.domain.features into libvirt's: ACPI and APIC are on unless switched
// off (KubeVirt's defaults); SMM is on when asked or when secure boot needs it.
func (c *converter) features() *libvirtxml.DomainFeatureList {
	f := c.vmi.Spec.Domain.Features
	out := &libvirtxml.DomainFeatureList{}
	if f == nil || f.ACPI.Enabled == nil || *f.ACPI.Enabled {
		out.ACPI = &libvirtxml.DomainFeature{}
	}
	if f == nil || f.APIC == nil || f.APIC.On() {
		out.APIC = &libvirtxml.DomainFeatureAPIC{}
		if f != nil && f.APIC != nil && f.APIC.EndOfInterrupt {
			out.APIC.EOI = "on"
		}
	}
	smm := needsSMM(c.vmi.Spec.Domain.Firmware)
	if f != nil && f.SMM != nil {
		if !f.SMM.On() && smm {
			c.fail(field.Invalid(domainPath.Child("features", "smm", "enabled"), false, "EFI secure boot needs SMM"))
		}
		smm = f.SMM.On()
	}
	if smm {
		out.SMM = &libvirtxml.DomainFeatureSMM{State: "on"}
	}
	if f == nil {
		return out
	}
	if f.KVM != nil && f.KVM.Hidden {
		out.KVM = &libvirtxml.DomainFeatureKVM{Hidden: &libvirtxml.DomainFeatureState{State: "on"}}
	}
	if f.Pvspinlock != nil {
		out.PVSpinlock = &libvirtxml.DomainFeatureState{State: onOff(f.Pvspinlock.On())}
	}
	if f.HypervPassthrough != nil && (f.HypervPassthrough.Enabled == nil || *f.HypervPassthrough.Enabled) {
		out.HyperV = &libvirtxml.DomainFeatureHyperV{Mode: "passthrough"}
	} else if f.Hyperv != nil {
		out.HyperV = hyperv(f.Hyperv)
	}
	return out
}

func hyperv(h *v1.FeatureHyperv) *libvirtxml.DomainFeatureHyperV {
	state := func(s *v1.FeatureState) *libvirtxml.DomainFeatureState {
		if s == nil {
			return nil
		}
		return &libvirtxml.DomainFeatureState{State: onOff(s.On())}
	}
	out := &libvirtxml.DomainFeatureHyperV{
		Mode:            "custom",
		Relaxed:         state(h.Relaxed),
		VAPIC:           state(h.VAPIC),
		VPIndex:         state(h.VPIndex),
		Runtime:         state(h.Runtime),
		Synic:           state(h.SyNIC),
		Reset:           state(h.Reset),
		Frequencies:     state(h.Frequencies),
		ReEnlightenment: state(h.Reenlightenment),
		IPI:             state(h.IPI),
		EVMCS:           state(h.EVMCS),
	}
	if s := h.Spinlocks; s != nil {
		out.Spinlocks = &libvirtxml.DomainFeatureHyperVSpinlocks{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(s.On())}}
		if s.On() {
			retries := uint(4096)
			if s.Retries != nil {
				retries = uint(*s.Retries)
			}
			out.Spinlocks.Retries = retries
		}
	}
	if t := h.SyNICTimer; t != nil {
		out.STimer = &libvirtxml.DomainFeatureHyperVSTimer{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(t.On())}, Direct: state(t.Direct)}
	}
	if v := h.VendorID; v != nil {
		out.VendorId = &libvirtxml.DomainFeatureHyperVVendorId{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(v.On())}, Value: v.VendorID}
	}
	if t := h.TLBFlush; t != nil {
		out.TLBFlush = &libvirtxml.DomainFeatureHyperVTLBFlush{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(t.On())}, Direct: state(t.Direct), Extended: state(t.Extended)}
	}
	return out
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// clock turns spec.domain.clock into libvirt's; no clock is UTC, as in KubeVirt.
func (c *converter) clock() *libvirtxml.DomainClock {
	spec := c.vmi.Spec.Domain.Clock
	out := &libvirtxml.DomainClock{Offset: "utc"}
	if spec == nil {
		return out
	}
	p := domainPath.Child("clock")
	switch {
	case spec.UTC != nil && spec.Timezone != nil:
		c.fail(field.Invalid(p, "utc,timezone", "set utc or timezone, not both"))
	case spec.Timezone != nil:
		if c.text(p.Child("timezone"), string(*spec.Timezone)) {
			out.Offset, out.TimeZone = "timezone", string(*spec.Timezone)
		}
	case spec.UTC != nil && spec.UTC.OffsetSeconds != nil:
		out.Adjustment, out.Basis = strconv.Itoa(*spec.UTC.OffsetSeconds), "utc"
	}
	if t := spec.Timer; t != nil {
		timer := func(name, tick string, present *bool) {
			if tick == "" && present == nil {
				return
			}
			dt := libvirtxml.DomainTimer{Name: name, TickPolicy: tick}
			if present != nil {
				dt.Present = map[bool]string{true: "yes", false: "no"}[*present]
			}
			out.Timer = append(out.Timer, dt)
		}
		if t.HPET != nil {
			timer("hpet", t.HPET.TickPolicy, t.HPET.Enabled)
		}
		if t.PIT != nil {
			timer("pit", t.PIT.TickPolicy, t.PIT.Enabled)
		}
		if t.RTC != nil {
			timer("rtc", t.RTC.TickPolicy, t.RTC.Enabled)
			if t.RTC.Track != "" && len(out.Timer) > 0 && out.Timer[len(out.Timer)-1].Name == "rtc" {
				out.Timer[len(out.Timer)-1].Track = t.RTC.Track
			}
		}
		if t.KVM != nil {
			timer("kvmclock", "", t.KVM.Enabled)
		}
		if t.Hyperv != nil {
			timer("hypervclock", "", t.Hyperv.Enabled)
		}
	}
	return out
}
