package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachine keeps at most one VirtualMachineInstance of the same name alive according
// to its run strategy, and carries the instance's configuration across restarts.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=virtualmachines,singular=virtualmachine,shortName=vm;vms,categories=all;kubevirt
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=".status.printableStatus",description="Human readable status"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
type VirtualMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineSpec `json:"spec"`
	// +optional
	Status VirtualMachineStatus `json:"status,omitempty"`
}

// VirtualMachineList is a list of VirtualMachines.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachine `json:"items"`
}

// VirtualMachineSpec describes the instance a VirtualMachine keeps and when it runs. Its
// template needs memory unless an instance type gives it (the rule lives here, not on the
// domain, because only the VirtualMachine knows whether it has one).
//
// +kubebuilder:validation:XValidation:rule="!(has(self.running) && has(self.runStrategy))",message="spec.running and spec.runStrategy are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="has(self.instancetype) || !has(self.template.spec) || (has(self.template.spec.domain.memory) && has(self.template.spec.domain.memory.guest)) || (has(self.template.spec.domain.resources) && ((has(self.template.spec.domain.resources.requests) && 'memory' in self.template.spec.domain.resources.requests) || (has(self.template.spec.domain.resources.limits) && 'memory' in self.template.spec.domain.resources.limits)))",message="no memory requested: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory"
type VirtualMachineSpec struct {
	// Running is the deprecated boolean form of RunStrategy: true means Always, false Halted.
	// +optional
	Running *bool `json:"running,omitempty"`
	// RunStrategy says when the controller starts and stops the instance.
	// +optional
	RunStrategy *VirtualMachineRunStrategy `json:"runStrategy,omitempty"`
	// Instancetype names the instance type that sizes the instance (its vCPUs, memory and
	// what comes with them); the template may not set what the instance type sets.
	// +optional
	Instancetype *InstancetypeMatcher `json:"instancetype,omitempty"`
	// Preference names the preference whose values fill what the template leaves unset.
	// +optional
	Preference *PreferenceMatcher `json:"preference,omitempty"`
	// Template is the instance this VirtualMachine creates.
	Template *VirtualMachineInstanceTemplateSpec `json:"template"`
	// DataVolumeTemplates are CDI DataVolumes created with the VM; needs CDI, which this
	// cluster lacks: admission refuses them with that reason.
	// +optional
	DataVolumeTemplates []DataVolumeTemplateSpec `json:"dataVolumeTemplates,omitempty"`
}

// VirtualMachineRunStrategy is one of the run strategies KubeVirt defines.
//
// +kubebuilder:validation:Enum=Always;RerunOnFailure;Manual;Halted;Once
type VirtualMachineRunStrategy string

const (
	RunStrategyAlways         VirtualMachineRunStrategy = "Always"
	RunStrategyRerunOnFailure VirtualMachineRunStrategy = "RerunOnFailure"
	RunStrategyManual         VirtualMachineRunStrategy = "Manual"
	RunStrategyHalted         VirtualMachineRunStrategy = "Halted"
	RunStrategyOnce           VirtualMachineRunStrategy = "Once"
)

// VirtualMachineStatus is what the controller observed of the VirtualMachine and its instance.
type VirtualMachineStatus struct {
	// Created is true while an instance exists.
	Created bool `json:"created,omitempty"`
	// Ready is true while the instance's Ready condition is True.
	Ready bool `json:"ready,omitempty"`
	// PrintableStatus is a one-word summary, shown as STATUS by kubectl.
	PrintableStatus VirtualMachinePrintableStatus `json:"printableStatus,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineCondition `json:"conditions,omitempty"`
	// StateChangeRequests are pending start/stop requests, acted on in order.
	StateChangeRequests []VirtualMachineStateChangeRequest `json:"stateChangeRequests,omitempty"`
	// StartFailure counts consecutive failed starts for the crash-loop backoff.
	StartFailure *VirtualMachineStartFailure `json:"startFailure,omitempty"`
	// ObservedGeneration is the spec generation this status was computed from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// RunStrategy is the run strategy in effect, derived from spec.running or spec.runStrategy.
	RunStrategy VirtualMachineRunStrategy `json:"runStrategy,omitempty"`
	// InstancetypeRef is the instance type in use and the ControllerRevision pinning its copy.
	// +nullable
	// +optional
	InstancetypeRef *InstancetypeStatusRef `json:"instancetypeRef,omitempty"`
	// PreferenceRef is the preference in use and the ControllerRevision pinning its copy.
	// +nullable
	// +optional
	PreferenceRef *InstancetypeStatusRef `json:"preferenceRef,omitempty"`
}

// VirtualMachinePrintableStatus is the summary shown in `kubectl get vm`.
type VirtualMachinePrintableStatus string

const (
	VirtualMachineStatusStopped           VirtualMachinePrintableStatus = "Stopped"
	VirtualMachineStatusProvisioning      VirtualMachinePrintableStatus = "Provisioning"
	VirtualMachineStatusStarting          VirtualMachinePrintableStatus = "Starting"
	VirtualMachineStatusRunning           VirtualMachinePrintableStatus = "Running"
	VirtualMachineStatusPaused            VirtualMachinePrintableStatus = "Paused"
	VirtualMachineStatusStopping          VirtualMachinePrintableStatus = "Stopping"
	VirtualMachineStatusTerminating       VirtualMachinePrintableStatus = "Terminating"
	VirtualMachineStatusCrashLoopBackOff  VirtualMachinePrintableStatus = "CrashLoopBackOff"
	VirtualMachineStatusMigrating         VirtualMachinePrintableStatus = "Migrating"
	VirtualMachineStatusUnknown           VirtualMachinePrintableStatus = "Unknown"
	VirtualMachineStatusUnschedulable     VirtualMachinePrintableStatus = "ErrorUnschedulable"
	VirtualMachineStatusErrImagePull      VirtualMachinePrintableStatus = "ErrImagePull"
	VirtualMachineStatusImagePullBackOff  VirtualMachinePrintableStatus = "ImagePullBackOff"
	VirtualMachineStatusPvcNotFound       VirtualMachinePrintableStatus = "ErrorPvcNotFound"
	VirtualMachineStatusWaitingForVolumes VirtualMachinePrintableStatus = "WaitingForVolumeBinding"
)

// VirtualMachineConditionType names a VirtualMachine condition.
type VirtualMachineConditionType string

const (
	// VirtualMachineReady mirrors the instance's Ready condition.
	VirtualMachineReady VirtualMachineConditionType = "Ready"
	// VirtualMachineFailure carries the last error the controller met syncing the VirtualMachine.
	VirtualMachineFailure VirtualMachineConditionType = "Failure"
	// VirtualMachinePaused mirrors the instance's Paused condition.
	VirtualMachinePaused VirtualMachineConditionType = "Paused"
	// VirtualMachineRestartRequired is True while the instance runs a template spec the VM
	// no longer has: the change takes effect when the VM restarts.
	VirtualMachineRestartRequired VirtualMachineConditionType = "RestartRequired"
)

// VirtualMachineCondition is one observed condition of a VirtualMachine.
type VirtualMachineCondition struct {
	Type   VirtualMachineConditionType `json:"type"`
	Status k8sv1.ConditionStatus       `json:"status"`
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}

// StateChangeRequestAction is what a state change request asks for.
//
// +kubebuilder:validation:Enum=Start;Stop
type StateChangeRequestAction string

const (
	StartRequest StateChangeRequestAction = "Start"
	StopRequest  StateChangeRequestAction = "Stop"
)

// VirtualMachineStateChangeRequest asks the controller to start or stop the instance.
type VirtualMachineStateChangeRequest struct {
	Action StateChangeRequestAction `json:"action"`
	// Data carries request parameters, such as a forced grace period.
	Data map[string]string `json:"data,omitempty"`
	// UID names the instance a Stop request is for, so a stale request never stops a newer one.
	UID *types.UID `json:"uid,omitempty"`
}

// VirtualMachineStartFailure is the crash-loop bookkeeping of a VirtualMachine.
type VirtualMachineStartFailure struct {
	ConsecutiveFailCount int          `json:"consecutiveFailCount,omitempty"`
	RetryAfterTimestamp  *metav1.Time `json:"retryAfterTimestamp,omitempty"`
	LastFailedVMIUID     types.UID    `json:"lastFailedVMIUID,omitempty"`
}

// VirtualMachineInstanceTemplateSpec is the instance a VirtualMachine or a replica set creates.
type VirtualMachineInstanceTemplateSpec struct {
	// Labels and annotations here are copied to the instance. Unknown fields are kept (as
	// KubeVirt does) so templates written with creationTimestamp: null apply unchanged.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +nullable
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec VirtualMachineInstanceSpec `json:"spec,omitempty"`
}
