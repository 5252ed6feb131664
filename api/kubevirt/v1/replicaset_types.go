package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineInstanceReplicaSet keeps a number of identical, ephemeral instances alive,
// as a ReplicaSet does for pods.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:path=virtualmachineinstancereplicasets,singular=virtualmachineinstancereplicaset,shortName=vmirs;vmirss,categories=all;kubevirt
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="Number of replicas that should be running"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=".status.replicas",description="Number of replicas that exist"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=".status.readyReplicas",description="Number of replicas that are ready"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type VirtualMachineInstanceReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineInstanceReplicaSetSpec `json:"spec"`
	// +optional
	Status VirtualMachineInstanceReplicaSetStatus `json:"status,omitempty"`
}

// VirtualMachineInstanceReplicaSetList is a list of VirtualMachineInstanceReplicaSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VirtualMachineInstanceReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceReplicaSet `json:"items"`
}

// VirtualMachineInstanceReplicaSetSpec says how many instances of which template to keep.

type VirtualMachineInstanceReplicaSetSpec struct {
	// Replicas is the number of instances wanted; defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector selects the instances this replica set owns; it must match the template labels.
	Selector *metav1.LabelSelector `json:"selector"`
	// Template is the instance to create.
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || (has(self.spec.domain.memory) && has(self.spec.domain.memory.guest)) || (has(self.spec.domain.resources) && ((has(self.spec.domain.resources.requests) && 'memory' in self.spec.domain.resources.requests) || (has(self.spec.domain.resources.limits) && 'memory' in self.spec.domain.resources.limits)))",message="no memory requested: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory"
	Template *VirtualMachineInstanceTemplateSpec `json:"template"`
	// Paused stops the replica set from creating or deleting instances.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// VirtualMachineInstanceReplicaSetStatus is what the controller counted.
type VirtualMachineInstanceReplicaSetStatus struct {
	// Replicas is the number of instances that exist and are not being deleted.
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of those that are Ready.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceReplicaSetCondition `json:"conditions,omitempty"`
	// LabelSelector is the selector in string form, for the scale subresource (and HPA).
	LabelSelector string `json:"labelSelector,omitempty"`
}

// VirtualMachineInstanceReplicaSetConditionType names a replica set condition.
type VirtualMachineInstanceReplicaSetConditionType string

const (
	// VirtualMachineInstanceReplicaSetReplicaFailure is True when creating or deleting instances fails.
	VirtualMachineInstanceReplicaSetReplicaFailure VirtualMachineInstanceReplicaSetConditionType = "ReplicaFailure"
	// VirtualMachineInstanceReplicaSetReplicaPaused is True while spec.paused is set.
	VirtualMachineInstanceReplicaSetReplicaPaused VirtualMachineInstanceReplicaSetConditionType = "ReplicaPaused"
)

// VirtualMachineInstanceReplicaSetCondition is one observed condition of a replica set.
type VirtualMachineInstanceReplicaSetCondition struct {
	Type   VirtualMachineInstanceReplicaSetConditionType `json:"type"`
	Status k8sv1.ConditionStatus                         `json:"status"`
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
}
