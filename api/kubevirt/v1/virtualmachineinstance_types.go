package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineInstance is one running (or about to run) virtual machine: a domain inside a
// virt-launcher pod on one node.
//
// As in KubeVirt, the status is no subresource: virt-controller writes the phase, the node and
// the kubevirt.io/nodeName label in one patch (pkg/vmistatus). Only the platform's service
// accounts may change the status or that label (manifests/vmi-status-policy.yaml).
//
// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=virtualmachineinstances,singular=virtualmachineinstance,shortName=vmi;vmis,categories=all;kubevirt
// +kubebuilder:selectablefield:JSONPath=".status.nodeName"
// +kubebuilder:selectablefield:JSONPath=".status.migrationState.targetNode"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=".status.interfaces[0].ipAddress"
// +kubebuilder:printcolumn:name="NodeName",type=string,JSONPath=".status.nodeName"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Live-Migratable",type=string,JSONPath=".status.conditions[?(@.type=='LiveMigratable')].status",priority=1
// +kubebuilder:printcolumn:name="Paused",type=string,JSONPath=".status.conditions[?(@.type=='Paused')].status",priority=1
type VirtualMachineInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="(has(self.domain.memory) && has(self.domain.memory.guest)) || (has(self.domain.resources) && ((has(self.domain.resources.requests) && 'memory' in self.domain.resources.requests) || (has(self.domain.resources.limits) && 'memory' in self.domain.resources.limits)))",message="no memory requested: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory"
	Spec VirtualMachineInstanceSpec `json:"spec"`
	// +optional
	Status VirtualMachineInstanceStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstance `json:"items"`
}

// VirtualMachineInstanceSpec is the configuration of one virtual machine.
type VirtualMachineInstanceSpec struct {
	// Domain is the virtual hardware.
	Domain DomainSpec `json:"domain"`
	// NodeSelector, Affinity and Tolerations are copied to the virt-launcher pod.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Affinity *k8sv1.Affinity `json:"affinity,omitempty"`
	// +optional
	Tolerations []k8sv1.Toleration `json:"tolerations,omitempty"`
	// TerminationGracePeriodSeconds is how long the guest gets to shut down after an ACPI
	// power-off before it is killed. Defaults to 30; 0 kills at once.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Volumes are the sources of the disks in Domain.Devices.Disks, matched by name.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Volumes []Volume `json:"volumes,omitempty"`
	// Networks are the networks the interfaces in Domain.Devices.Interfaces attach to.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Networks []Network `json:"networks,omitempty"`
	// ReadinessProbe, when set, must pass before the instance is Ready.
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`
	// LivenessProbe, when set, ends the instance once it fails: the kubelet stops the compute
	// container, and a VM's run strategy decides what next.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`
	// Hostname is the guest's hostname; defaults to the instance name.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Subdomain, with a headless Service of that name selecting the instance, makes
	// <hostname>.<subdomain>.<namespace>.svc resolvable.
	// +optional
	Subdomain string `json:"subdomain,omitempty"`
	// DNSPolicy and DNSConfig are the launcher pod's; the guest gets its resolver by DHCP.
	// +optional
	DNSPolicy k8sv1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// +optional
	DNSConfig *k8sv1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// PriorityClassName, SchedulerName and TopologySpreadConstraints are copied to the
	// launcher pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// +optional
	TopologySpreadConstraints []k8sv1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// EvictionStrategy is what a node drain does: None (the default here, or virt-api's
	// --eviction-strategy) lets the pod be evicted and the guest stop, LiveMigrate migrates the
	// instance to another node instead, LiveMigrateIfPossible does so unless the instance
	// reports LiveMigratable False, External leaves it to another controller.
	// +kubebuilder:validation:Enum=None;LiveMigrate;LiveMigrateIfPossible;External
	// +optional
	EvictionStrategy *EvictionStrategy `json:"evictionStrategy,omitempty"`
	// StartStrategy Paused starts the guest paused; virtctl unpause lets it run.
	// +kubebuilder:validation:Enum=Paused
	// +optional
	StartStrategy *StartStrategy `json:"startStrategy,omitempty"`
	// ResourceClaims are DRA claims for GPUs and host devices; no DRA driver offers them here.
	// +optional
	ResourceClaims []k8sv1.PodResourceClaim `json:"resourceClaims,omitempty"`
	// Architecture is the guest's CPU architecture; KubeVirt writes amd64 into every
	// instance. Only amd64 runs here.
	// +optional
	Architecture string `json:"architecture,omitempty"`
	// AccessCredentials are SSH keys put into the guest at boot.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AccessCredentials []AccessCredential `json:"accessCredentials,omitempty"`
}

// AccessCredential is one way into the guest: the public keys of a Secret.
type AccessCredential struct {
	// +optional
	SSHPublicKey *SSHPublicKeyAccessCredential `json:"sshPublicKey,omitempty"`
	// UserPassword sets passwords through the guest agent: each key of the Secret is a user
	// name, its value the password.
	// +optional
	UserPassword *UserPasswordAccessCredential `json:"userPassword,omitempty"`
}

// SSHPublicKeyAccessCredential is a Secret whose every value is an authorized_keys line (or
// several), and how they reach the guest.
type SSHPublicKeyAccessCredential struct {
	Source            SSHPublicKeyAccessCredentialSource            `json:"source"`
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// SSHPublicKeyAccessCredentialSource is where the keys come from.
type SSHPublicKeyAccessCredentialSource struct {
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// AccessCredentialSecretSource names a Secret in the instance's namespace.
type AccessCredentialSecretSource struct {
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
}

// SSHPublicKeyAccessCredentialPropagationMethod is how the keys reach the guest: through the
// instance's cloud-init volume (noCloud or configDrive), or the guest agent (refused here).
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// +optional
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation `json:"noCloud,omitempty"`
	// +optional
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation `json:"configDrive,omitempty"`
	// +optional
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// NoCloudSSHPublicKeyAccessCredentialPropagation puts the keys in the NoCloud meta-data.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation puts the keys in the config drive's
// meta_data.json.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation writes the users' authorized_keys
// through the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// +optional
	Users []string `json:"users,omitempty"`
}

// UserPasswordAccessCredential is KubeVirt's password propagation through the guest agent.
type UserPasswordAccessCredential struct {
	Source            UserPasswordAccessCredentialSource            `json:"source"`
	PropagationMethod UserPasswordAccessCredentialPropagationMethod `json:"propagationMethod"`
}

// UserPasswordAccessCredentialSource is where the passwords come from.
type UserPasswordAccessCredentialSource struct {
	// +optional
	Secret *AccessCredentialSecretSource `json:"secret,omitempty"`
}

// UserPasswordAccessCredentialPropagationMethod is how passwords reach the guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// +optional
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation `json:"qemuGuestAgent,omitempty"`
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation sets passwords through the guest agent.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}

// Probe checks the guest from outside, as a Pod probe checks a container.
type Probe struct {
	Handler `json:",inline"`
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty"`
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
}

// Handler is the action a probe takes.
type Handler struct {
	// +optional
	HTTPGet *k8sv1.HTTPGetAction `json:"httpGet,omitempty"`
	// +optional
	TCPSocket *k8sv1.TCPSocketAction `json:"tcpSocket,omitempty"`
	// Exec runs a command in the guest through the guest agent; refused while there is none.
	// +optional
	Exec *k8sv1.ExecAction `json:"exec,omitempty"`
	// GuestAgentPing pings the guest agent; refused while there is none.
	// +optional
	GuestAgentPing *GuestAgentPing `json:"guestAgentPing,omitempty"`
}

// GuestAgentPing is a probe that pings the guest agent.
type GuestAgentPing struct{}

// EvictionStrategy is what a node drain does to an instance.
type EvictionStrategy string

const (
	EvictionStrategyNone                  EvictionStrategy = "None"
	EvictionStrategyLiveMigrate           EvictionStrategy = "LiveMigrate"
	EvictionStrategyLiveMigrateIfPossible EvictionStrategy = "LiveMigrateIfPossible"
	EvictionStrategyExternal              EvictionStrategy = "External"
)

// StartStrategy is how the guest starts.
type StartStrategy string

// StartStrategyPaused starts the guest paused.
const StartStrategyPaused StartStrategy = "Paused"

// VirtualMachineInstancePhase is where an instance is in its life.
type VirtualMachineInstancePhase string

const (
	VmPhaseUnset VirtualMachineInstancePhase = ""
	// Pending: accepted, no launcher pod yet.
	Pending VirtualMachineInstancePhase = "Pending"
	// Scheduling: the launcher pod exists but waits for a node.
	Scheduling VirtualMachineInstancePhase = "Scheduling"
	// Scheduled: the launcher pod is bound to a node (status.nodeName), where it starts; the
	// domain is not running yet.
	Scheduled VirtualMachineInstancePhase = "Scheduled"
	// Running: the domain runs.
	Running VirtualMachineInstancePhase = "Running"
	// Succeeded: the guest shut down.
	Succeeded VirtualMachineInstancePhase = "Succeeded"
	// Failed: the domain crashed, was killed, or its pod was lost.
	Failed VirtualMachineInstancePhase = "Failed"
	// Unknown: the node running the instance cannot be reached.
	Unknown VirtualMachineInstancePhase = "Unknown"
)

// VirtualMachineInstanceStatus is what the controller and node agent observed of an instance.
type VirtualMachineInstanceStatus struct {
	// NodeName is the node the instance runs on.
	NodeName string `json:"nodeName,omitempty"`
	// Reason says briefly why the instance is in its phase.
	Reason string `json:"reason,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceCondition `json:"conditions,omitempty"`
	Phase      VirtualMachineInstancePhase       `json:"phase,omitempty"`
	// PhaseTransitionTimestamps records when each phase was reached.
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty"`
	// Interfaces are the guest's network interfaces as seen from the pod.
	Interfaces []VirtualMachineInstanceNetworkInterface `json:"interfaces,omitempty"`
	// QOSClass is the launcher pod's quality of service class.
	QOSClass *k8sv1.PodQOSClass `json:"qosClass,omitempty"`
	// CurrentCPUTopology is the guest's CPU topology.
	CurrentCPUTopology *CPUTopology `json:"currentCPUTopology,omitempty"`
	// Memory is the guest's memory: at boot, now, and as requested.
	Memory *MemoryStatus `json:"memory,omitempty"`
	// GuestOSInfo is the guest's operating system, as its agent last reported it.
	GuestOSInfo VirtualMachineInstanceGuestOSInfo `json:"guestOSInfo,omitempty"`
	// FSFreezeStatus is "frozen" while a freeze of the guest's file systems (the freeze
	// subresource) is in force, unset otherwise. As in KubeVirt, it says what was asked of the
	// guest agent, not what the guest's file systems are.
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty"`
	// LauncherContainerImageVersion is the image of the launcher running this instance.
	LauncherContainerImageVersion string `json:"launcherContainerImageVersion,omitempty"`
	// ActivePods maps the UID of each launcher pod of this instance to its node.
	ActivePods map[types.UID]string `json:"activePods,omitempty"`
	// MigrationState is the instance's current or last live migration.
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty"`
	// MigrationMethod says whether a migration copies local disks (BlockMigration) or only
	// memory (LiveMigration).
	MigrationMethod VirtualMachineInstanceMigrationMethod `json:"migrationMethod,omitempty"`
	// MigrationTransport is how a migration's traffic travels between the nodes.
	MigrationTransport VirtualMachineInstanceMigrationTransport `json:"migrationTransport,omitempty"`
	// EvacuationNodeName is the node a drain asked this instance to leave: virt-controller
	// migrates it away.
	EvacuationNodeName string `json:"evacuationNodeName,omitempty"`
	// VolumeStatus is each volume's state: the device the guest sees it as (target) once it
	// runs, and for a claim the claim's size and access.
	VolumeStatus []VolumeStatus `json:"volumeStatus,omitempty"`
	// Machine is the machine type the guest runs on, as the node resolved it (pc-q35-7.2 for
	// q35).
	Machine *Machine `json:"machine,omitempty"`
	// RuntimeUser is the user id QEMU runs as in the launcher pod.
	// +optional
	RuntimeUser uint64 `json:"runtimeUser"`
}

// FSFrozen is status.fsFreezeStatus while the guest's file systems are frozen.
const FSFrozen = "frozen"

// VolumeStatus is one volume of an instance, as KubeVirt reports it.
type VolumeStatus struct {
	// Name is the volume's name in spec.volumes.
	Name string `json:"name"`
	// Target is the guest's device name for the volume's disk (vda, sda), "" for a volume
	// no disk uses.
	Target string `json:"target"`
	// Phase, Reason and Message are KubeVirt's for hotplugged volumes, which this platform
	// does not offer: unset.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// PersistentVolumeClaimInfo is the claim behind a persistentVolumeClaim or ephemeral volume.
	// +optional
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo `json:"persistentVolumeClaimInfo,omitempty"`
	// Size is KubeVirt's for memory dump volumes: unset.
	// +optional
	Size int64 `json:"size,omitempty"`
}

// PersistentVolumeClaimInfo is what the instance's claim says of itself.
type PersistentVolumeClaimInfo struct {
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// +optional
	AccessModes []k8sv1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// +optional
	VolumeMode *k8sv1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// Capacity is the bound volume's (the claim's status).
	// +optional
	Capacity k8sv1.ResourceList `json:"capacity,omitempty"`
	// Requests is what the claim asked for.
	// +optional
	Requests k8sv1.ResourceList `json:"requests,omitempty"`
	// +optional
	Preallocated bool `json:"preallocated,omitempty"`
}

// VirtualMachineInstanceConditionType names an instance condition.
type VirtualMachineInstanceConditionType string

const (
	// VirtualMachineInstanceReady is True while the domain runs and its readiness probe passes.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstancePodScheduled mirrors the launcher pod's PodScheduled condition.
	VirtualMachineInstancePodScheduled VirtualMachineInstanceConditionType = "PodScheduled"
	// VirtualMachineInstancePaused is True while the domain is paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
	// VirtualMachineInstanceSynchronized is False while the node agent fails to sync the domain.
	VirtualMachineInstanceSynchronized VirtualMachineInstanceConditionType = "Synchronized"
	// VirtualMachineInstanceIsMigratable says whether the instance can live-migrate, and if
	// not, why (Reason: DisksNotLiveMigratable, InterfaceNotLiveMigratable, ...).
	VirtualMachineInstanceIsMigratable VirtualMachineInstanceConditionType = "LiveMigratable"
)

// Reasons of a LiveMigratable condition that is False, as KubeVirt names them.
const (
	VirtualMachineInstanceReasonDisksNotMigratable     = "DisksNotLiveMigratable"
	VirtualMachineInstanceReasonInterfaceNotMigratable = "InterfaceNotLiveMigratable"
	VirtualMachineInstanceReasonVirtIOFSNotMigratable  = "VirtIOFSNotLiveMigratable"
)

// VirtualMachineInstanceReasonPvcNotFound is the reason of a Synchronized condition that is
// False while a claim the instance names does not exist: its launcher pod waits for it.
const VirtualMachineInstanceReasonPvcNotFound = "FailedPvcNotFound"

// VirtualMachineInstanceCondition is one observed condition of an instance.
type VirtualMachineInstanceCondition struct {
	Type   VirtualMachineInstanceConditionType `json:"type"`
	Status k8sv1.ConditionStatus               `json:"status"`
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

// VirtualMachineInstancePhaseTransitionTimestamp is when an instance reached a phase.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	Phase VirtualMachineInstancePhase `json:"phase,omitempty"`
	// +nullable
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty"`
}

// VirtualMachineInstanceNetworkInterface is a guest interface and its addresses.
type VirtualMachineInstanceNetworkInterface struct {
	// IP is the primary address, shown as IP by kubectl.
	IP string `json:"ipAddress,omitempty"`
	// IPs are all addresses of the interface.
	IPs []string `json:"ipAddresses,omitempty"`
	MAC string   `json:"mac,omitempty"`
	// Name is the interface's name in the spec.
	Name string `json:"name,omitempty"`
	// InterfaceName is the interface's name inside the guest, where known.
	InterfaceName string `json:"interfaceName,omitempty"`
	// InfoSource says where the interface's data comes from: "domain", or "domain,
	// guest-agent" once the guest's agent reported the interface too.
	InfoSource string `json:"infoSource,omitempty"`
}

// CPUTopology is a guest's sockets, cores per socket and threads per core.
type CPUTopology struct {
	Cores   uint32 `json:"cores,omitempty"`
	Sockets uint32 `json:"sockets,omitempty"`
	Threads uint32 `json:"threads,omitempty"`
}

// MemoryStatus is a guest's memory. Without memory hotplug the three are the same.
type MemoryStatus struct {
	GuestAtBoot    *resource.Quantity `json:"guestAtBoot,omitempty"`
	GuestCurrent   *resource.Quantity `json:"guestCurrent,omitempty"`
	GuestRequested *resource.Quantity `json:"guestRequested,omitempty"`
}
