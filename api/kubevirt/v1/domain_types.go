package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of an instance.
//
// +kubebuilder:validation:XValidation:rule="(has(self.memory) && has(self.memory.guest)) || (has(self.resources) && ((has(self.resources.requests) && 'memory' in self.resources.requests) || (has(self.resources.limits) && 'memory' in self.resources.limits)))",message="no memory requested: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory"
type DomainSpec struct {
	// Resources are the compute resources the instance's pod requests.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`
	// +optional
	CPU *CPU `json:"cpu,omitempty"`
	// +optional
	Memory *Memory `json:"memory,omitempty"`
	// +optional
	Machine *Machine `json:"machine,omitempty"`
	// +optional
	Firmware *Firmware `json:"firmware,omitempty"`
	// +optional
	Devices Devices `json:"devices"`
}

// ResourceRequirements are the pod resources of an instance; memory also sizes the guest
// unless Memory.Guest says otherwise.
//
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !('memory' in self.requests) || quantity(string(self.requests['memory'])).isGreaterThan(quantity('0'))",message="spec.domain.resources.requests.memory must be greater than zero"
// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !('memory' in self.limits) || quantity(string(self.limits['memory'])).isGreaterThan(quantity('0'))",message="spec.domain.resources.limits.memory must be greater than zero"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('memory' in self.requests) || !('memory' in self.limits) || quantity(string(self.requests['memory'])).compareTo(quantity(string(self.limits['memory']))) <= 0",message="spec.domain.resources.requests.memory must not be greater than spec.domain.resources.limits.memory"
type ResourceRequirements struct {
	// +optional
	Requests k8sv1.ResourceList `json:"requests,omitempty"`
	// +optional
	Limits k8sv1.ResourceList `json:"limits,omitempty"`
	// OvercommitGuestOverhead leaves the launcher's own overhead out of the pod's memory request.
	// +optional
	OvercommitGuestOverhead bool `json:"overcommitGuestOverhead,omitempty"`
}

// CPU is the guest's CPU topology and model.
type CPU struct {
	// +optional
	Cores uint32 `json:"cores,omitempty"`
	// +optional
	Sockets uint32 `json:"sockets,omitempty"`
	// +optional
	Threads uint32 `json:"threads,omitempty"`
	// Model is a libvirt CPU model, or host-model / host-passthrough.
	// +optional
	Model string `json:"model,omitempty"`
}

// Memory is the guest's memory.
type Memory struct {
	// Guest is the memory the guest sees; defaults to the memory request.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.domain.memory.guest must be greater than zero"
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty"`
}

// Machine is the emulated machine type.
type Machine struct {
	// Type is a QEMU machine type such as q35; empty means the node's default.
	// +optional
	Type string `json:"type"`
}

// Firmware is what the guest's firmware reports and how it boots.
type Firmware struct {
	// UUID is the SMBIOS system UUID; a VirtualMachine keeps it stable across restarts.
	// +optional
	UUID types.UID `json:"uuid,omitempty"`
	// Serial is the SMBIOS system serial number.
	// +optional
	Serial string `json:"serial,omitempty"`
	// KernelBoot boots a kernel and initrd taken from a container image, without a bootloader.
	// +optional
	KernelBoot *KernelBoot `json:"kernelBoot,omitempty"`
	// Bootloader is the firmware that boots the guest's disks: BIOS (SeaBIOS, the default)
	// or EFI (OVMF).
	// +optional
	Bootloader *Bootloader `json:"bootloader,omitempty"`
}

// Bootloader is one firmware: bios or efi.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.bios) && has(self.efi))",message="spec.domain.firmware.bootloader: set bios or efi, not both"
type Bootloader struct {
	// +optional
	BIOS *BIOS `json:"bios,omitempty"`
	// +optional
	EFI *EFI `json:"efi,omitempty"`
}

// BIOS boots by SeaBIOS.
type BIOS struct {
	// UseSerial makes SeaBIOS print its messages on the serial console too.
	// +optional
	UseSerial *bool `json:"useSerial,omitempty"`
}

// EFI boots by UEFI (OVMF).
type EFI struct {
	// SecureBoot enforces signed bootloaders; KubeVirt defaults it to true.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty"`
	// Persistent keeps the EFI variables across restarts.
	// +optional
	Persistent *bool `json:"persistent,omitempty"`
}

// KernelBoot boots the guest directly from a kernel (and initrd).
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	// +optional
	KernelArgs string `json:"kernelArgs,omitempty"`
	// Container is the image holding the kernel and initrd.
	// +optional
	Container *KernelBootContainer `json:"container,omitempty"`
}

// KernelBootContainer names the image and paths of a kernel boot.
//
// +kubebuilder:validation:XValidation:rule="has(self.kernelPath) || has(self.initrdPath)",message="spec.domain.firmware.kernelBoot.container must set kernelPath or initrdPath"
type KernelBootContainer struct {
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
	// +optional
	KernelPath string `json:"kernelPath,omitempty"`
	// +optional
	InitrdPath string `json:"initrdPath,omitempty"`
	// +optional
	ImagePullPolicy k8sv1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// Devices are the guest's disks and network interfaces.
type Devices struct {
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Disks []Disk `json:"disks,omitempty"`
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Interfaces []Interface `json:"interfaces,omitempty"`
	// AutoattachPodInterface adds a masquerade interface on the pod network when no interface
	// is listed; defaults to true.
	// +optional
	AutoattachPodInterface *bool `json:"autoattachPodInterface,omitempty"`
}

// Disk is a guest disk; its source is the volume of the same name.
type Disk struct {
	// +kubebuilder:validation:MinLength=1
	Name       string `json:"name"`
	DiskDevice `json:",inline"`
	// BootOrder sets the boot priority: lower boots first.
	// +kubebuilder:validation:Minimum=1
	// +optional
	BootOrder *uint `json:"bootOrder,omitempty"`
	// +optional
	Serial string `json:"serial,omitempty"`
}

// DiskDevice is how a disk is presented to the guest: exactly one of its fields, or none for a disk.
type DiskDevice struct {
	// +optional
	Disk *DiskTarget `json:"disk,omitempty"`
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty"`
}

// DiskBus is the bus a disk sits on.
//
// +kubebuilder:validation:Enum=virtio;sata;scsi;usb
type DiskBus string

const (
	DiskBusVirtio DiskBus = "virtio"
	DiskBusSATA   DiskBus = "sata"
	DiskBusSCSI   DiskBus = "scsi"
	DiskBusUSB    DiskBus = "usb"
)

// DiskTarget presents a volume as a hard disk.
type DiskTarget struct {
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// +optional
	ReadOnly bool `json:"readonly,omitempty"`
}

// CDRomTarget presents a volume as a CD-ROM.
type CDRomTarget struct {
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// ReadOnly defaults to true.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty"`
}

// Interface is a guest network interface; it attaches to the network of the same name.
type Interface struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Model is the emulated NIC, such as virtio or e1000.
	// +optional
	Model                  string `json:"model,omitempty"`
	InterfaceBindingMethod `json:",inline"`
	// Ports limits which ports a masquerade interface forwards; empty forwards all.
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// +optional
	MacAddress string `json:"macAddress,omitempty"`
}

// InterfaceBindingMethod is how the interface connects to the pod network: one of its fields.
type InterfaceBindingMethod struct {
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty"`
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty"`
}

// InterfaceBridge gives the guest the pod's IP and MAC on an in-pod bridge.
type InterfaceBridge struct{}

// InterfaceMasquerade puts the guest behind NAT on the pod IP.
type InterfaceMasquerade struct{}

// Port is a port a masquerade interface forwards to the guest.
type Port struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +kubebuilder:validation:Enum=TCP;UDP
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
}

// Volume is the source of the disk of the same name.
type Volume struct {
	// +kubebuilder:validation:MinLength=1
	Name         string `json:"name"`
	VolumeSource `json:",inline"`
}

// VolumeSource is exactly one kind of volume.
type VolumeSource struct {
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty"`
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty"`
	// +optional
	CloudInitConfigDrive *CloudInitConfigDriveSource `json:"cloudInitConfigDrive,omitempty"`
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty"`
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
}

// ContainerDiskSource is a disk image shipped in a container image; writes are discarded.
type ContainerDiskSource struct {
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
	// Path is the disk image inside the container; defaults to the first file under /disk.
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	ImagePullPolicy k8sv1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// CloudInitNoCloudSource is cloud-init NoCloud user and network data, presented as a disk.
type CloudInitNoCloudSource struct {
	// +optional
	UserDataSecretRef *k8sv1.LocalObjectReference `json:"secretRef,omitempty"`
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// +optional
	UserData string `json:"userData,omitempty"`
	// +optional
	NetworkDataSecretRef *k8sv1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// CloudInitConfigDriveSource is cloud-init (or cloudbase-init) user and network data in the
// OpenStack config-drive layout, presented as a disk labelled config-2.
type CloudInitConfigDriveSource struct {
	// +optional
	UserDataSecretRef *k8sv1.LocalObjectReference `json:"secretRef,omitempty"`
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// +optional
	UserData string `json:"userData,omitempty"`
	// +optional
	NetworkDataSecretRef *k8sv1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// EmptyDiskSource is a blank sparse disk that lives as long as the instance.
type EmptyDiskSource struct {
	Capacity resource.Quantity `json:"capacity"`
}

// PersistentVolumeClaimVolumeSource is a disk backed by a PVC. Same JSON shape as the core
// type KubeVirt embeds; spelled out because the apply-configuration generator cannot embed it.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the PVC in the instance's namespace.
	// +kubebuilder:validation:MinLength=1
	ClaimName string `json:"claimName"`
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Network is a network interfaces attach to by name.
type Network struct {
	// +kubebuilder:validation:MinLength=1
	Name          string `json:"name"`
	NetworkSource `json:",inline"`
}

// NetworkSource is exactly one kind of network.
type NetworkSource struct {
	// +optional
	Pod *PodNetwork `json:"pod,omitempty"`
}

// PodNetwork is the pod's own network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest-side network of a masquerade interface; defaults to 10.0.2.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty"`
}
