package v1

// Devices are the guest's virtual devices. Fields this platform cannot give a guest (GPUs,
// host devices, SR-IOV, virtiofs ...) are part of the schema so KubeVirt manifests decode;
// admission refuses them naming what the cluster lacks.
type Devices struct {
	// UseVirtioTransitional presents virtio devices in the transitional (virtio 0.9) model for
	// old guests.
	// +optional
	UseVirtioTransitional *bool `json:"useVirtioTransitional,omitempty"`
	// DisableHotplug disables disk hotplug (which this platform does not offer anyway).
	// +optional
	DisableHotplug bool `json:"disableHotplug,omitempty"`
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Disks []Disk `json:"disks,omitempty"`
	// +optional
	Watchdog *Watchdog `json:"watchdog,omitempty"`
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Interfaces []Interface `json:"interfaces,omitempty"`
	// +optional
	Inputs []Input `json:"inputs,omitempty"`
	// AutoattachPodInterface adds a masquerade interface on the pod network when no interface
	// is listed; defaults to true.
	// +optional
	AutoattachPodInterface *bool `json:"autoattachPodInterface,omitempty"`
	// AutoattachGraphicsDevice adds a VGA display, reached with virtctl vnc; defaults to
	// true.
	// +optional
	AutoattachGraphicsDevice *bool `json:"autoattachGraphicsDevice,omitempty"`
	// AutoattachSerialConsole adds the serial console (virtctl console); defaults to true.
	// +optional
	AutoattachSerialConsole *bool `json:"autoattachSerialConsole,omitempty"`
	// LogSerialConsole streams the serial console to the guest-console-log container;
	// defaults to true.
	// +optional
	LogSerialConsole *bool `json:"logSerialConsole,omitempty"`
	// AutoattachMemBalloon adds a virtio memory balloon; defaults to true.
	// +optional
	AutoattachMemBalloon *bool `json:"autoattachMemBalloon,omitempty"`
	// AutoattachInputDevice adds a USB tablet; defaults to false.
	// +optional
	AutoattachInputDevice *bool `json:"autoattachInputDevice,omitempty"`
	// AutoattachVSOCK adds a virtio vsock device; defaults to false.
	// +optional
	AutoattachVSOCK *bool `json:"autoattachVSOCK,omitempty"`
	// Rng adds a virtio random number generator fed by the host's /dev/urandom.
	// +optional
	Rng *Rng `json:"rng,omitempty"`
	// BlockMultiQueue gives virtio disks one queue per vCPU.
	// +optional
	BlockMultiQueue *bool `json:"blockMultiQueue,omitempty"`
	// NetworkInterfaceMultiQueue gives virtio interfaces one queue per vCPU.
	// +optional
	NetworkInterfaceMultiQueue *bool `json:"networkInterfaceMultiqueue,omitempty"`
	// +optional
	GPUs []GPU `json:"gpus,omitempty"`
	// +optional
	DownwardMetrics *DownwardMetrics `json:"downwardMetrics,omitempty"`
	// +optional
	Filesystems []Filesystem `json:"filesystems,omitempty"`
	// +optional
	HostDevices []HostDevice `json:"hostDevices,omitempty"`
	// +optional
	ClientPassthrough *ClientPassthroughDevices `json:"clientPassthrough,omitempty"`
	// +optional
	Sound *SoundDevice `json:"sound,omitempty"`
	// +optional
	TPM *TPMDevice `json:"tpm,omitempty"`
}

// Rng is a virtio random number generator.
type Rng struct{}

// Watchdog is a named hardware watchdog.
type Watchdog struct {
	Name           string `json:"name"`
	WatchdogDevice `json:",inline"`
}

// WatchdogDevice is the watchdog's model.
type WatchdogDevice struct {
	// +optional
	I6300ESB *I6300ESBWatchdog `json:"i6300esb,omitempty"`
}

// I6300ESBWatchdog is Intel's 6300ESB watchdog.
type I6300ESBWatchdog struct {
	// Action is poweroff, reset (the default) or shutdown.
	// +kubebuilder:validation:Enum=poweroff;reset;shutdown
	// +optional
	Action string `json:"action,omitempty"`
}

// Input is an input device.
type Input struct {
	// Bus is usb or virtio.
	// +kubebuilder:validation:Enum=usb;virtio
	// +optional
	Bus string `json:"bus,omitempty"`
	// Type is tablet or keyboard.
	// +kubebuilder:validation:Enum=tablet;keyboard
	Type string `json:"type"`
	Name string `json:"name"`
}

// GPU is a GPU from a device plugin or a DRA claim.
type GPU struct {
	Name string `json:"name"`
	// +optional
	DeviceName string `json:"deviceName,omitempty"`
	// ClaimName and RequestName name a device of a DRA claim (spec.resourceClaims).
	// +optional
	ClaimName *string `json:"claimName,omitempty"`
	// +optional
	RequestName *string `json:"requestName,omitempty"`
	// +optional
	Tag string `json:"tag,omitempty"`
}

// HostDevice is a host PCI or USB device from a device plugin or a DRA claim.
type HostDevice struct {
	Name string `json:"name"`
	// +optional
	DeviceName string `json:"deviceName,omitempty"`
	// ClaimName and RequestName name a device of a DRA claim (spec.resourceClaims).
	// +optional
	ClaimName *string `json:"claimName,omitempty"`
	// +optional
	RequestName *string `json:"requestName,omitempty"`
	// +optional
	Tag string `json:"tag,omitempty"`
}

// Filesystem is a shared directory presented to the guest.
type Filesystem struct {
	Name     string              `json:"name"`
	Virtiofs *FilesystemVirtiofs `json:"virtiofs"`
}

// FilesystemVirtiofs shares the filesystem through virtiofs.
type FilesystemVirtiofs struct{}

// DownwardMetrics is a virtio-serial port with host metrics for the guest.
type DownwardMetrics struct{}

// ClientPassthroughDevices turns on USB redirection from the client.
type ClientPassthroughDevices struct{}

// SoundDevice is an emulated sound card.
type SoundDevice struct {
	Name string `json:"name"`
	// Model is ich9 (the default) or ac97.
	// +optional
	Model string `json:"model,omitempty"`
}

// TPMDevice is an emulated TPM.
type TPMDevice struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +optional
	Persistent *bool `json:"persistent,omitempty"`
}

// IsEnabled reports whether the guest gets a TPM: `tpm: {}` means one, `enabled: false` none.
func (t *TPMDevice) IsEnabled() bool { return t != nil && (t.Enabled == nil || *t.Enabled) }

// GraphicsAttached says whether the guest has a display: unless autoattachGraphicsDevice is
// false, as in KubeVirt.
func (d *Devices) GraphicsAttached() bool {
	return d.AutoattachGraphicsDevice == nil || *d.AutoattachGraphicsDevice
}
