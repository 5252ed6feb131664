package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// VirtualMachinePreference is a namespaced set of preferred values: each fills its field of
// a VirtualMachine's instance only where the template leaves it unset.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=virtualmachinepreferences,singular=virtualmachinepreference,shortName=vmpref;vmprefs;vmp;vmps,categories=all
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachinePreference struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachinePreferenceSpec `json:"spec"`
}

// VirtualMachinePreferenceList is a list of VirtualMachinePreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachinePreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachinePreference `json:"items"`
}

// VirtualMachineClusterPreference is the cluster-wide preference, the kind a
// VirtualMachine's spec.preference names unless it says otherwise.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=virtualmachineclusterpreferences,singular=virtualmachineclusterpreference,scope=Cluster,shortName=vmcp;vmcps
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachineClusterPreference struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachinePreferenceSpec `json:"spec"`
}

// VirtualMachineClusterPreferenceList is a list of VirtualMachineClusterPreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineClusterPreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineClusterPreference `json:"items"`
}

// VirtualMachinePreferenceSpec is a preference: every field optional, each a fallback.
type VirtualMachinePreferenceSpec struct {
	// +optional
	Clock *ClockPreferences `json:"clock,omitempty"`
	// +optional
	CPU *CPUPreferences `json:"cpu,omitempty"`
	// +optional
	Devices *DevicePreferences `json:"devices,omitempty"`
	// +optional
	Features *FeaturePreferences `json:"features,omitempty"`
	// +optional
	Firmware *FirmwarePreferences `json:"firmware,omitempty"`
	// +optional
	Machine *MachinePreferences `json:"machine,omitempty"`
	// Volumes holds the preferred storage class of DataVolume templates.
	// +optional
	Volumes *VolumePreferences `json:"volumes,omitempty"`
	// PreferredSubdomain is the instance's subdomain.
	// +optional
	PreferredSubdomain *string `json:"preferredSubdomain,omitempty"`
	// PreferredTerminationGracePeriodSeconds is the instance's grace period.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PreferredTerminationGracePeriodSeconds *int64 `json:"preferredTerminationGracePeriodSeconds,omitempty"`
	// Requirements are the least CPU and memory an instance type must give for this
	// preference to be usable with it.
	// +optional
	Requirements *PreferenceRequirements `json:"requirements,omitempty"`
	// Annotations are put on the instance unless the template sets the key.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// PreferSpreadSocketToCoreRatio is the sockets:cores ratio of the spread topology
	// (default 2); CPU.SpreadOptions.Ratio overrides it.
	// +optional
	PreferSpreadSocketToCoreRatio uint32 `json:"preferSpreadSocketToCoreRatio,omitempty"`
	// PreferredArchitecture is the instance's architecture.
	// +optional
	PreferredArchitecture *string `json:"preferredArchitecture,omitempty"`
}

// VolumePreferences are preferences of the VirtualMachine's volumes.
type VolumePreferences struct {
	// +optional
	PreferredStorageClassName string `json:"preferredStorageClassName,omitempty"`
}

// PreferredCPUTopology is how an instance type's vCPUs are shown to the guest.
//
// +kubebuilder:validation:Enum=preferCores;preferSockets;preferThreads;preferSpread;preferAny;cores;sockets;threads;spread;any
type PreferredCPUTopology string

const (
	Cores   PreferredCPUTopology = "cores"
	Sockets PreferredCPUTopology = "sockets"
	Threads PreferredCPUTopology = "threads"
	// Spread divides the vCPUs between sockets and cores (and threads) by a ratio.
	Spread PreferredCPUTopology = "spread"
	// Any takes the template's topology; with an instance type it means sockets.
	Any PreferredCPUTopology = "any"

	// The deprecated spellings of the same, still accepted.
	DeprecatedPreferCores   PreferredCPUTopology = "preferCores"
	DeprecatedPreferSockets PreferredCPUTopology = "preferSockets"
	DeprecatedPreferThreads PreferredCPUTopology = "preferThreads"
	DeprecatedPreferSpread  PreferredCPUTopology = "preferSpread"
	DeprecatedPreferAny     PreferredCPUTopology = "preferAny"
)

// CPUPreferences are the preferred CPU topology and features.
type CPUPreferences struct {
	// PreferredCPUTopology defaults to sockets.
	// +optional
	PreferredCPUTopology *PreferredCPUTopology `json:"preferredCPUTopology,omitempty"`
	// +optional
	SpreadOptions *SpreadOptions `json:"spreadOptions,omitempty"`
	// PreferredCPUFeatures are added unless the template names the same feature.
	// +optional
	PreferredCPUFeatures []v1.CPUFeature `json:"preferredCPUFeatures,omitempty"`
}

// SpreadAcross is which topology levels the spread topology uses.
//
// +kubebuilder:validation:Enum=SocketsCoresThreads;SocketsCores;CoresThreads
type SpreadAcross string

const (
	SpreadAcrossSocketsCoresThreads SpreadAcross = "SocketsCoresThreads"
	SpreadAcrossSocketsCores        SpreadAcross = "SocketsCores"
	SpreadAcrossCoresThreads        SpreadAcross = "CoresThreads"
)

// SpreadOptions tune the spread topology.
type SpreadOptions struct {
	// Across defaults to SocketsCores.
	// +optional
	Across *SpreadAcross `json:"across,omitempty"`
	// Ratio is cores per socket (SocketsCores, SocketsCoresThreads) or threads per core
	// (CoresThreads, only 2); defaults to 2.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Ratio *uint32 `json:"ratio,omitempty"`
}

// FeaturePreferences are the preferred platform features.
type FeaturePreferences struct {
	// +optional
	PreferredAcpi *v1.FeatureState `json:"preferredAcpi,omitempty"`
	// +optional
	PreferredApic *v1.FeatureAPIC `json:"preferredApic,omitempty"`
	// +optional
	PreferredHyperv *v1.FeatureHyperv `json:"preferredHyperv,omitempty"`
	// +optional
	PreferredKvm *v1.FeatureKVM `json:"preferredKvm,omitempty"`
	// +optional
	PreferredPvspinlock *v1.FeatureState `json:"preferredPvspinlock,omitempty"`
	// +optional
	PreferredSmm *v1.FeatureState `json:"preferredSmm,omitempty"`
}

// FirmwarePreferences are the preferred bootloader.
type FirmwarePreferences struct {
	// PreferredUseBios selects SeaBIOS.
	// +optional
	PreferredUseBios *bool `json:"preferredUseBios,omitempty"`
	// PreferredUseBiosSerial copies SeaBIOS's output to the serial console.
	// +optional
	PreferredUseBiosSerial *bool `json:"preferredUseBiosSerial,omitempty"`
	// DeprecatedPreferredUseEfi selects EFI; use preferredEfi.
	// +optional
	DeprecatedPreferredUseEfi *bool `json:"preferredUseEfi,omitempty"`
	// DeprecatedPreferredUseSecureBoot sets EFI's secure boot; use preferredEfi.
	// +optional
	DeprecatedPreferredUseSecureBoot *bool `json:"preferredUseSecureBoot,omitempty"`
	// PreferredEfi selects EFI with these settings.
	// +optional
	PreferredEfi *v1.EFI `json:"preferredEfi,omitempty"`
}

// MachinePreferences are the preferred machine type.
type MachinePreferences struct {
	// +optional
	PreferredMachineType string `json:"preferredMachineType,omitempty"`
}

// ClockPreferences are the preferred clock.
type ClockPreferences struct {
	// +optional
	PreferredClockOffset *v1.ClockOffset `json:"preferredClockOffset,omitempty"`
	// +optional
	PreferredTimer *v1.Timer `json:"preferredTimer,omitempty"`
}

// PreferenceRequirements are the least an instance type (or, without one, the template)
// must give.
type PreferenceRequirements struct {
	// +optional
	CPU *CPUPreferenceRequirement `json:"cpu,omitempty"`
	// +optional
	Memory *MemoryPreferenceRequirement `json:"memory,omitempty"`
	// Architecture the VirtualMachine must have.
	// +optional
	Architecture *string `json:"architecture,omitempty"`
}

// CPUPreferenceRequirement is the least number of vCPUs.
type CPUPreferenceRequirement struct {
	Guest uint32 `json:"guest"`
}

// MemoryPreferenceRequirement is the least guest memory.
type MemoryPreferenceRequirement struct {
	Guest resource.Quantity `json:"guest"`
}
