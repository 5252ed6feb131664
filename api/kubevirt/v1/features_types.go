package v1

// Features are the platform features shown to the guest.
type Features struct {
	// ACPI is on unless enabled is false.
	// +optional
	ACPI FeatureState `json:"acpi,omitempty"`
	// APIC is on unless enabled is false.
	// +optional
	APIC *FeatureAPIC `json:"apic,omitempty"`
	// HypervPassthrough turns on every Hyper-V enlightenment the host offers.
	// +optional
	HypervPassthrough *HyperVPassthrough `json:"hypervPassthrough,omitempty"`
	// Hyperv are the Hyper-V enlightenments for Windows guests.
	// +optional
	Hyperv *FeatureHyperv `json:"hyperv,omitempty"`
	// SMM is System Management Mode; EFI secure boot turns it on.
	// +optional
	SMM *FeatureState `json:"smm,omitempty"`
	// KVM hides KVM from the guest.
	// +optional
	KVM *FeatureKVM `json:"kvm,omitempty"`
	// Pvspinlock tells the guest the host has paravirtual spinlocks.
	// +optional
	Pvspinlock *FeatureState `json:"pvspinlock,omitempty"`
}

// FeatureState is a feature switched on (enabled empty or true) or off.
type FeatureState struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// On reports whether a present feature is switched on (enabled defaults to true).
func (f *FeatureState) On() bool { return f != nil && (f.Enabled == nil || *f.Enabled) }

// FeatureAPIC is the APIC feature.
type FeatureAPIC struct {
	FeatureState `json:",inline"`
	// +optional
	EndOfInterrupt bool `json:"endOfInterrupt,omitempty"`
}

// HyperVPassthrough is the Hyper-V passthrough switch.
type HyperVPassthrough struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// FeatureHyperv are the Hyper-V enlightenments.
type FeatureHyperv struct {
	// +optional
	Relaxed *FeatureState `json:"relaxed,omitempty"`
	// +optional
	VAPIC *FeatureState `json:"vapic,omitempty"`
	// +optional
	Spinlocks *FeatureSpinlocks `json:"spinlocks,omitempty"`
	// +optional
	VPIndex *FeatureState `json:"vpindex,omitempty"`
	// +optional
	Runtime *FeatureState `json:"runtime,omitempty"`
	// +optional
	SyNIC *FeatureState `json:"synic,omitempty"`
	// +optional
	SyNICTimer *SyNICTimer `json:"synictimer,omitempty"`
	// +optional
	Reset *FeatureState `json:"reset,omitempty"`
	// +optional
	VendorID *FeatureVendorID `json:"vendorid,omitempty"`
	// +optional
	Frequencies *FeatureState `json:"frequencies,omitempty"`
	// +optional
	Reenlightenment *FeatureState `json:"reenlightenment,omitempty"`
	// +optional
	TLBFlush *TLBFlush `json:"tlbflush,omitempty"`
	// +optional
	IPI *FeatureState `json:"ipi,omitempty"`
	// +optional
	EVMCS *FeatureState `json:"evmcs,omitempty"`
}

// FeatureSpinlocks is the Hyper-V spinlock retry count.
type FeatureSpinlocks struct {
	FeatureState `json:",inline"`
	// Retries defaults to 4096, the least allowed.
	// +kubebuilder:validation:Minimum=4096
	// +optional
	Retries *uint32 `json:"spinlocks,omitempty"`
}

// SyNICTimer is the Hyper-V synthetic timer.
type SyNICTimer struct {
	FeatureState `json:",inline"`
	// +optional
	Direct *FeatureState `json:"direct,omitempty"`
}

// FeatureVendorID is the hypervisor vendor id shown to the guest.
type FeatureVendorID struct {
	FeatureState `json:",inline"`
	// +kubebuilder:validation:MaxLength=12
	// +optional
	VendorID string `json:"vendorid,omitempty"`
}

// TLBFlush is the Hyper-V TLB flush enlightenment.
type TLBFlush struct {
	FeatureState `json:",inline"`
	// +optional
	Direct *FeatureState `json:"direct,omitempty"`
	// +optional
	Extended *FeatureState `json:"extended,omitempty"`
}

// FeatureKVM hides KVM's signature.
type FeatureKVM struct {
	// +optional
	Hidden bool `json:"hidden,omitempty"`
}

// Clock is the guest's clock: exactly one offset (utc or timezone) and its timers.
type Clock struct {
	ClockOffset `json:",inline"`
	// +optional
	Timer *Timer `json:"timer,omitempty"`
}

// ClockOffset is UTC (with an optional offset) or a time zone.
type ClockOffset struct {
	// +optional
	UTC *ClockOffsetUTC `json:"utc,omitempty"`
	// Timezone is a TZ name such as America/New_York.
	// +optional
	Timezone *ClockOffsetTimezone `json:"timezone,omitempty"`
}

// ClockOffsetUTC sets the clock to UTC plus an offset, kept across reboots.
type ClockOffsetUTC struct {
	// +optional
	OffsetSeconds *int `json:"offsetSeconds,omitempty"`
}

// ClockOffsetTimezone is a TZ name.
type ClockOffsetTimezone string

// Timer are the timers the guest gets.
type Timer struct {
	// +optional
	HPET *HPETTimer `json:"hpet,omitempty"`
	// +optional
	KVM *KVMTimer `json:"kvm,omitempty"`
	// +optional
	PIT *PITTimer `json:"pit,omitempty"`
	// +optional
	RTC *RTCTimer `json:"rtc,omitempty"`
	// +optional
	Hyperv *HypervTimer `json:"hyperv,omitempty"`
}

// HPETTimer is the High Precision Event Timer.
type HPETTimer struct {
	// +kubebuilder:validation:Enum=delay;catchup;merge;discard
	// +optional
	TickPolicy string `json:"tickPolicy,omitempty"`
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// PITTimer is the Programmable Interval Timer.
type PITTimer struct {
	// +kubebuilder:validation:Enum=delay;catchup;discard
	// +optional
	TickPolicy string `json:"tickPolicy,omitempty"`
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// RTCTimer is the Real Time Clock.
type RTCTimer struct {
	// +kubebuilder:validation:Enum=delay;catchup
	// +optional
	TickPolicy string `json:"tickPolicy,omitempty"`
	// +optional
	Enabled *bool `json:"present,omitempty"`
	// Track is guest or wall.
	// +kubebuilder:validation:Enum=guest;wall
	// +optional
	Track string `json:"track,omitempty"`
}

// KVMTimer is the paravirtual KVM clock.
type KVMTimer struct {
	// +optional
	Enabled *bool `json:"present,omitempty"`
}

// HypervTimer is the Hyper-V reference clock.
type HypervTimer struct {
	// +optional
	Enabled *bool `json:"present,omitempty"`
}
