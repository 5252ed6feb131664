package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineInstanceMigration asks for one live migration of a running instance to
// another node: virt-controller starts a target launcher pod there, the two virt-handlers
// move the domain between the launchers, and the instance keeps running throughout.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=virtualmachineinstancemigrations,singular=virtualmachineinstancemigration,shortName=vmim;vmims,categories=all;kubevirt
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="VMI",type=string,JSONPath=".spec.vmiName"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachineInstanceMigration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the migration and create another"
	Spec VirtualMachineInstanceMigrationSpec `json:"spec"`
	// +optional
	Status VirtualMachineInstanceMigrationStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceMigrationList is a list of VirtualMachineInstanceMigrations.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineInstanceMigrationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceMigration `json:"items"`
}

// VirtualMachineInstanceMigrationSpec names the instance to move.
type VirtualMachineInstanceMigrationSpec struct {
	// VMIName is the instance, in the migration's namespace.
	// +kubebuilder:validation:MinLength=1
	VMIName string `json:"vmiName"`
	// AddedNodeSelector narrows the nodes the target may run on, on top of the instance's
	// own node selector and affinity.
	// +optional
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty"`
}

// VirtualMachineInstanceMigrationPhase is where a migration is.
type VirtualMachineInstanceMigrationPhase string

const (
	MigrationPhaseUnset VirtualMachineInstanceMigrationPhase = ""
	// MigrationPending: accepted, waiting for its turn (one per instance, a cluster-wide limit).
	MigrationPending VirtualMachineInstanceMigrationPhase = "Pending"
	// MigrationScheduling: the target launcher pod exists and waits for a node.
	MigrationScheduling VirtualMachineInstanceMigrationPhase = "Scheduling"
	// MigrationScheduled: the target pod runs on its node.
	MigrationScheduled VirtualMachineInstanceMigrationPhase = "Scheduled"
	// MigrationPreparingTarget: the target's handler prepares the pod to receive the domain.
	MigrationPreparingTarget VirtualMachineInstanceMigrationPhase = "PreparingTarget"
	// MigrationTargetReady: the target listens; the source may start sending.
	MigrationTargetReady VirtualMachineInstanceMigrationPhase = "TargetReady"
	// MigrationRunning: memory (and disks) are being copied.
	MigrationRunning VirtualMachineInstanceMigrationPhase = "Running"
	// MigrationSucceeded: the instance runs on the target node; the source pod ends.
	MigrationSucceeded VirtualMachineInstanceMigrationPhase = "Succeeded"
	// MigrationFailed: the instance still runs where it was; the reason is in status.
	MigrationFailed VirtualMachineInstanceMigrationPhase = "Failed"
)

// IsFinal says whether the migration is over.
func (p VirtualMachineInstanceMigrationPhase) IsFinal() bool {
	return p == MigrationSucceeded || p == MigrationFailed
}

// VirtualMachineInstanceMigrationStatus is what virt-controller observed of a migration.
type VirtualMachineInstanceMigrationStatus struct {
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceMigrationCondition `json:"conditions,omitempty"`
	// PhaseTransitionTimestamps records when each phase was reached.
	PhaseTransitionTimestamps []VirtualMachineInstanceMigrationPhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty"`
	// MigrationState is the instance's status.migrationState for this migration, kept
	// here once the instance has moved on (or was deleted).
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty"`
}

// VirtualMachineInstanceMigrationConditionType names a migration condition.
type VirtualMachineInstanceMigrationConditionType string

const (
	// VirtualMachineInstanceMigrationAbortRequested is True once the migration was cancelled.
	VirtualMachineInstanceMigrationAbortRequested VirtualMachineInstanceMigrationConditionType = "migrationAbortRequested"
	// VirtualMachineInstanceMigrationRejectedByResourceQuota is True while the namespace's
	// quota refuses the target pod.
	VirtualMachineInstanceMigrationRejectedByResourceQuota VirtualMachineInstanceMigrationConditionType = "migrationRejectedByResourceQuota"
)

// VirtualMachineInstanceMigrationCondition is one observed condition of a migration.
type VirtualMachineInstanceMigrationCondition struct {
	Type   VirtualMachineInstanceMigrationConditionType `json:"type"`
	Status k8sv1.ConditionStatus                        `json:"status"`
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

// VirtualMachineInstanceMigrationPhaseTransitionTimestamp is when a migration reached a phase.
type VirtualMachineInstanceMigrationPhaseTransitionTimestamp struct {
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty"`
	// +nullable
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty"`
}

// VirtualMachineInstanceMigrationState is an instance's current or last migration, as its
// status.migrationState shows it.
type VirtualMachineInstanceMigrationState struct {
	// MigrationUID is the VirtualMachineInstanceMigration's UID.
	MigrationUID types.UID `json:"migrationUid,omitempty"`
	// StartTimestamp and EndTimestamp bound the copy between the nodes.
	// +nullable
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// +nullable
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// TargetNodeDomainReadyTimestamp is when the domain ran on the target.
	// +nullable
	TargetNodeDomainReadyTimestamp *metav1.Time `json:"targetNodeDomainReadyTimestamp,omitempty"`
	// TargetNodeDomainDetected is True once the target's handler saw the incoming domain.
	TargetNodeDomainDetected bool `json:"targetNodeDomainDetected,omitempty"`
	// TargetNodeAddress is where the target's handler takes the migration's traffic.
	TargetNodeAddress string `json:"targetNodeAddress,omitempty"`
	// TargetDirectMigrationNodePorts maps the target handler's ports to what they carry.
	TargetDirectMigrationNodePorts map[string]int `json:"targetDirectMigrationNodePorts,omitempty"`
	TargetNode                     string         `json:"targetNode,omitempty"`
	TargetPod                      string         `json:"targetPod,omitempty"`
	SourceNode                     string         `json:"sourceNode,omitempty"`
	SourcePod                      string         `json:"sourcePod,omitempty"`
	// Completed is True once the copy ended, successfully or not; Failed says which.
	Completed bool `json:"completed,omitempty"`
	Failed    bool `json:"failed,omitempty"`
	// AbortRequested is True once the migration was cancelled; AbortStatus says how that went.
	AbortRequested bool                 `json:"abortRequested,omitempty"`
	AbortStatus    MigrationAbortStatus `json:"abortStatus,omitempty"`
	// FailureReason says why the migration failed.
	FailureReason string `json:"failureReason,omitempty"`
	// Mode is PreCopy (memory copied while the guest runs) or PostCopy.
	Mode MigrationMode `json:"mode,omitempty"`
	// MigrationPolicyName names the MigrationPolicy that tuned this migration, if one did.
	// +optional
	MigrationPolicyName *string `json:"migrationPolicyName,omitempty"`
	// MigrationConfiguration is the settings this migration runs with: virt-controller's
	// defaults, overridden by the policy.
	// +optional
	MigrationConfiguration *MigrationConfiguration `json:"migrationConfiguration,omitempty"`
}

// MigrationConfiguration is how one migration runs (KubeVirt's fields that this platform
// honours).
type MigrationConfiguration struct {
	// BandwidthPerMigration caps the transfer rate, per second (0: unlimited).
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty"`
	// CompletionTimeoutPerGiB bounds the copy, in seconds per GiB of guest memory.
	// +optional
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty"`
	// AllowAutoConverge lets QEMU slow down a guest that dirties memory too fast.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty"`
	// UnsafeMigrationOverride has libvirt migrate even where it judges the migration unsafe,
	// such as a disk shared between nodes on a file system libvirt takes for a local one.
	// +optional
	UnsafeMigrationOverride *bool `json:"unsafeMigrationOverride,omitempty"`
}

// MigrationAbortStatus is how a cancellation went.
type MigrationAbortStatus string

const (
	MigrationAbortSucceeded  MigrationAbortStatus = "Succeeded"
	MigrationAbortFailed     MigrationAbortStatus = "Failed"
	MigrationAbortInProgress MigrationAbortStatus = "Aborting"
)

// MigrationMode is how memory moves.
type MigrationMode string

const (
	MigrationPreCopy  MigrationMode = "PreCopy"
	MigrationPostCopy MigrationMode = "PostCopy"
)

// VirtualMachineInstanceMigrationMethod is how an instance's disks move with it.
type VirtualMachineInstanceMigrationMethod string

const (
	// BlockMigration copies local disks (containerDisk, emptyDisk) with the memory.
	BlockMigration VirtualMachineInstanceMigrationMethod = "BlockMigration"
	// LiveMigration moves memory only: every disk is shared storage.
	LiveMigration VirtualMachineInstanceMigrationMethod = "LiveMigration"
)

// VirtualMachineInstanceMigrationTransport is how the migration's traffic travels.
type VirtualMachineInstanceMigrationTransport string

// MigrationTransportUnix carries it over unix sockets the handlers proxy between the nodes.
const MigrationTransportUnix VirtualMachineInstanceMigrationTransport = "Unix"

// Labels of migrations and target pods, with KubeVirt's names.
const (
	// MigrationJobLabel on a target launcher pod is the UID of its migration.
	MigrationJobLabel = "kubevirt.io/migrationJobUID"
	// MigrationJobNameAnnotation on a target launcher pod is the name of its migration.
	MigrationJobNameAnnotation = "kubevirt.io/migrationJobName"
	// MigrationSelectorLabel on a migration is its instance's name (virtctl migrate-cancel
	// and kubectl get vmim -l find an instance's migrations by it).
	MigrationSelectorLabel = "kubevirt.io/vmi-name"
	// MigrationFinalizer holds a migration until its target pod is handled.
	MigrationFinalizer = "kubevirt.io/migrationJobFinalize"
)
