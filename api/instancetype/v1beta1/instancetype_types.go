package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// VirtualMachineInstancetype is a namespaced instance type: the vCPUs, memory and related
// resources of the VirtualMachines that name it. A VirtualMachine may not set what its
// instance type sets.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=virtualmachineinstancetypes,singular=virtualmachineinstancetype,shortName=vminstancetype;vminstancetypes;vmf;vmfs,categories=all
// +kubebuilder:printcolumn:name="CPU",type=integer,JSONPath=".spec.cpu.guest"
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=".spec.memory.guest"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachineInstancetype struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineInstancetypeSpec `json:"spec"`
}

// VirtualMachineInstancetypeList is a list of VirtualMachineInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstancetype `json:"items"`
}

// VirtualMachineClusterInstancetype is the cluster-wide instance type, the kind a
// VirtualMachine's spec.instancetype names unless it says otherwise.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=virtualmachineclusterinstancetypes,singular=virtualmachineclusterinstancetype,scope=Cluster,shortName=vmclusterinstancetype;vmclusterinstancetypes;vmcf;vmcfs
// +kubebuilder:printcolumn:name="CPU",type=integer,JSONPath=".spec.cpu.guest"
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=".spec.memory.guest"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineInstancetypeSpec `json:"spec"`
}

// VirtualMachineClusterInstancetypeList is a list of VirtualMachineClusterInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineClusterInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineClusterInstancetype `json:"items"`
}

// VirtualMachineInstancetypeSpec is what an instance type gives a VirtualMachine. CPU and
// memory are required, so every instance type sizes its guests.
type VirtualMachineInstancetypeSpec struct {
	// NodeSelector is copied to the instance (and its launcher pod).
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// SchedulerName is the scheduler of the instance's launcher pod.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// CPU is the number of vCPUs and how they run.
	CPU CPUInstancetype `json:"cpu"`
	// Memory is the guest's memory.
	Memory MemoryInstancetype `json:"memory"`
	// GPUs are passed through to the guest.
	// +listType=atomic
	// +optional
	GPUs []v1.GPU `json:"gpus,omitempty"`
	// HostDevices are passed through to the guest.
	// +listType=atomic
	// +optional
	HostDevices []v1.HostDevice `json:"hostDevices,omitempty"`
	// IOThreadsPolicy is the disks' I/O thread policy.
	// +kubebuilder:validation:Enum=shared;auto;supplementalPool
	// +optional
	IOThreadsPolicy *v1.IOThreadsPolicy `json:"ioThreadsPolicy,omitempty"`
	// IOThreads sizes the supplementalPool policy.
	// +optional
	IOThreads *v1.DiskIOThreads `json:"ioThreads,omitempty"`
	// LaunchSecurity is the confidential computing the guest asks for.
	// +optional
	LaunchSecurity *v1.LaunchSecurity `json:"launchSecurity,omitempty"`
	// Annotations are put on the instance; a VirtualMachine template may not give a key
	// another value.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CPUInstancetype is the CPU of an instance type. Guest vCPUs become sockets, cores or
// threads as the VirtualMachine's preference says (sockets by default).
type CPUInstancetype struct {
	// Guest is the number of vCPUs.
	// +kubebuilder:validation:Minimum=1
	Guest uint32 `json:"guest"`
	// Model is the CPU model (a libvirt model, host-model or host-passthrough).
	// +optional
	Model *string `json:"model,omitempty"`
	// DedicatedCPUPlacement pins each vCPU to a dedicated host CPU.
	// +optional
	DedicatedCPUPlacement *bool `json:"dedicatedCPUPlacement,omitempty"`
	// NUMA is the guest's NUMA topology.
	// +optional
	NUMA *v1.NUMA `json:"numa,omitempty"`
	// IsolateEmulatorThread gives QEMU's emulator thread a dedicated host CPU of its own.
	// +optional
	IsolateEmulatorThread *bool `json:"isolateEmulatorThread,omitempty"`
	// Realtime tunes the guest for low latency.
	// +optional
	Realtime *v1.Realtime `json:"realtime,omitempty"`
	// MaxSockets is the most sockets CPU hotplug may reach.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxSockets *uint32 `json:"maxSockets,omitempty"`
}

// MemoryInstancetype is the memory of an instance type.
type MemoryInstancetype struct {
	// Guest is the memory the guest sees.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.memory.guest must be greater than zero"
	Guest resource.Quantity `json:"guest"`
	// Hugepages backs the guest's memory with huge pages.
	// +optional
	Hugepages *v1.Hugepages `json:"hugepages,omitempty"`
	// OvercommitPercent lowers the launcher pod's memory request below the guest memory by
	// that percentage; a guest that uses it all may then be killed.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	OvercommitPercent int `json:"overcommitPercent,omitempty"`
	// MaxGuest is the most memory hotplug may reach.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty"`
}
