package v1beta1

import v1 "github.com/vmctl/vmctl/api/kubevirt/v1"

// DevicePreferences are the preferred devices of the instance: each fills the field of the
// same name under spec.domain.devices (or of each disk and interface) where it is unset.
// KubeVirt's preferredVirtualGPUOptions and preferredPanicDeviceModel are absent: this
// platform's instances have neither vGPU display options nor panic devices.
type DevicePreferences struct {
	// +optional
	PreferredAutoattachGraphicsDevice *bool `json:"preferredAutoattachGraphicsDevice,omitempty"`
	// +optional
	PreferredAutoattachMemBalloon *bool `json:"preferredAutoattachMemBalloon,omitempty"`
	// +optional
	PreferredAutoattachPodInterface *bool `json:"preferredAutoattachPodInterface,omitempty"`
	// +optional
	PreferredAutoattachSerialConsole *bool `json:"preferredAutoattachSerialConsole,omitempty"`
	// +optional
	PreferredAutoattachInputDevice *bool `json:"preferredAutoattachInputDevice,omitempty"`
	// +optional
	PreferredDisableHotplug *bool `json:"preferredDisableHotplug,omitempty"`
	// PreferredSoundModel is the model of a sound device that names none.
	// +optional
	PreferredSoundModel string `json:"preferredSoundModel,omitempty"`
	// +optional
	PreferredUseVirtioTransitional *bool `json:"preferredUseVirtioTransitional,omitempty"`
	// PreferredInputBus is the bus of input devices that name none (usb or virtio).
	// +optional
	PreferredInputBus string `json:"preferredInputBus,omitempty"`
	// PreferredInputType is the type of input devices that name none (tablet).
	// +optional
	PreferredInputType string `json:"preferredInputType,omitempty"`
	// PreferredDiskBus is the bus of disks (spec.domain.devices.disks[].disk) that name none.
	// +optional
	PreferredDiskBus v1.DiskBus `json:"preferredDiskBus,omitempty"`
	// +optional
	PreferredLunBus v1.DiskBus `json:"preferredLunBus,omitempty"`
	// +optional
	PreferredCdromBus v1.DiskBus `json:"preferredCdromBus,omitempty"`
	// PreferredDiskDedicatedIoThread applies to virtio disks only.
	// +optional
	PreferredDiskDedicatedIoThread *bool `json:"preferredDiskDedicatedIoThread,omitempty"`
	// +optional
	PreferredDiskCache v1.DriverCache `json:"preferredDiskCache,omitempty"`
	// +optional
	PreferredDiskIO v1.DriverIO `json:"preferredDiskIO,omitempty"`
	// +optional
	PreferredDiskBlockSize *v1.BlockSize `json:"preferredDiskBlockSize,omitempty"`
	// PreferredInterfaceModel is the model of interfaces that name none.
	// +optional
	PreferredInterfaceModel string `json:"preferredInterfaceModel,omitempty"`
	// PreferredRng adds a virtio RNG device.
	// +optional
	PreferredRng *v1.Rng `json:"preferredRng,omitempty"`
	// +optional
	PreferredBlockMultiQueue *bool `json:"preferredBlockMultiQueue,omitempty"`
	// +optional
	PreferredNetworkInterfaceMultiQueue *bool `json:"preferredNetworkInterfaceMultiQueue,omitempty"`
	// +optional
	PreferredTPM *v1.TPMDevice `json:"preferredTPM,omitempty"`
	// PreferredInterfaceMasquerade binds interfaces that name no binding by masquerade.
	// +optional
	PreferredInterfaceMasquerade *v1.InterfaceMasquerade `json:"preferredInterfaceMasquerade,omitempty"`
	// PreferredVideoType is kept for KubeVirt manifests; this platform's instances have no
	// video device to apply it to.
	// +optional
	PreferredVideoType *string `json:"preferredVideoType,omitempty"`
}
