package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of an instance. Its memory rule is on the objects that
// embed it (instance, replica set template, VirtualMachine without an instance type).
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
	// Clock is the guest's clock offset and timers.
	// +optional
	Clock *Clock `json:"clock,omitempty"`
	// Features are the ACPI, APIC, SMM, Hyper-V and KVM features shown to the guest.
	// +optional
	Features *Features `json:"features,omitempty"`
	// +optional
	Devices Devices `json:"devices"`
	// IOThreadsPolicy gives disks QEMU I/O threads: shared (one for all) or auto (a pool).
	// +kubebuilder:validation:Enum=shared;auto;supplementalPool
	// +optional
	IOThreadsPolicy *IOThreadsPolicy `json:"ioThreadsPolicy,omitempty"`
	// IOThreads sizes the supplementalPool policy.
	// +optional
	IOThreads *DiskIOThreads `json:"ioThreads,omitempty"`
	// Chassis is the SMBIOS chassis information.
	// +optional
	Chassis *Chassis `json:"chassis,omitempty"`
	// LaunchSecurity asks for confidential computing (AMD SEV); no node here offers it, so
	// admission refuses it.
	// +optional
	LaunchSecurity *LaunchSecurity `json:"launchSecurity,omitempty"`
}

// IOThreadsPolicy is how disks share QEMU I/O threads.
type IOThreadsPolicy string

const (
	IOThreadsPolicyShared           IOThreadsPolicy = "shared"
	IOThreadsPolicyAuto             IOThreadsPolicy = "auto"
	IOThreadsPolicySupplementalPool IOThreadsPolicy = "supplementalPool"
)

// DiskIOThreads sizes the supplemental I/O thread pool.
type DiskIOThreads struct {
	// +optional
	SupplementalPoolThreadCount *uint32 `json:"supplementalPoolThreadCount,omitempty"`
}

// Chassis is the SMBIOS chassis information the guest reads.
type Chassis struct {
	// +optional
	Manufacturer string `json:"manufacturer,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Serial string `json:"serial,omitempty"`
	// +optional
	Asset string `json:"asset,omitempty"`
	// +optional
	Sku string `json:"sku,omitempty"`
}

// LaunchSecurity is KubeVirt's confidential-computing request.
type LaunchSecurity struct {
	// +optional
	SEV *SEV `json:"sev,omitempty"`
}

// SEV is AMD Secure Encrypted Virtualization.
type SEV struct {
	// +optional
	Policy *SEVPolicy `json:"policy,omitempty"`
	// +optional
	Attestation *SEVAttestation `json:"attestation,omitempty"`
	// +optional
	Session string `json:"session,omitempty"`
	// +optional
	DHCert string `json:"dhCert,omitempty"`
}

// SEVPolicy are SEV's guest policy flags.
type SEVPolicy struct {
	// +optional
	EncryptedState *bool `json:"encryptedState,omitempty"`
}

// SEVAttestation asks for SEV attestation.
type SEVAttestation struct{}

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
	// MaxSockets is the most sockets CPU hotplug may reach.
	// +optional
	MaxSockets uint32 `json:"maxSockets,omitempty"`
	// Model is a libvirt CPU model, or host-model / host-passthrough. A node without KVM
	// emulates: there host-model and host-passthrough fall back to QEMU's emulated CPU
	// (see docs/guests.md), a named model is emulated as asked.
	// +optional
	Model string `json:"model,omitempty"`
	// Features switches single CPU features on or off.
	// +optional
	Features []CPUFeature `json:"features,omitempty"`
	// DedicatedCPUPlacement pins each vCPU to a dedicated host CPU (needs the kubelet's
	// static CPU manager policy).
	// +optional
	DedicatedCPUPlacement bool `json:"dedicatedCpuPlacement,omitempty"`
	// NUMA mirrors the host's NUMA placement into the guest (needs dedicated CPUs and
	// hugepages).
	// +optional
	NUMA *NUMA `json:"numa,omitempty"`
	// IsolateEmulatorThread gives QEMU's emulator thread a dedicated CPU too.
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty"`
	// Realtime tunes the vCPUs for real-time work (needs dedicated CPUs).
	// +optional
	Realtime *Realtime `json:"realtime,omitempty"`
}

// CPUFeature is one CPU feature and what to do with it.
type CPUFeature struct {
	// Name is libvirt's name of the feature, e.g. "pcid".
	Name string `json:"name"`
	// Policy is force, require (the default), optional, disable or forbid.
	// +kubebuilder:validation:Enum=force;require;optional;disable;forbid
	// +optional
	Policy string `json:"policy,omitempty"`
}

// NUMA is the guest's NUMA topology.
type NUMA struct {
	// +optional
	GuestMappingPassthrough *NUMAGuestMappingPassthrough `json:"guestMappingPassthrough,omitempty"`
}

// NUMAGuestMappingPassthrough maps the pod's host NUMA nodes into the guest.
type NUMAGuestMappingPassthrough struct{}

// Realtime holds the real-time tuning knobs.
type Realtime struct {
	// Mask is the libvirt vCPU mask of the real-time vCPUs, e.g. "0-3,^1".
	// +optional
	Mask string `json:"mask,omitempty"`
}

// Memory is the guest's memory.
type Memory struct {
	// Guest is the memory the guest sees; defaults to the memory request.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.domain.memory.guest must be greater than zero"
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty"`
	// Hugepages backs the guest's memory with huge pages of this size; the node must have
	// them (the pod requests hugepages-<size>).
	// +optional
	Hugepages *Hugepages `json:"hugepages,omitempty"`
	// MaxGuest is the most memory hotplug may reach.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty"`
}

// Hugepages names the huge page size: 2Mi or 1Gi on x86_64.
type Hugepages struct {
	// +optional
	PageSize string `json:"pageSize,omitempty"`
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
	// ACPI adds tables (SLIC, MSDM) from secret volumes.
	// +optional
	ACPI *ACPI `json:"acpi,omitempty"`
}

// ACPI names the volumes holding extra ACPI tables.
type ACPI struct {
	// +optional
	SlicNameRef string `json:"slicNameRef,omitempty"`
	// +optional
	MsdmNameRef string `json:"msdmNameRef,omitempty"`
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
