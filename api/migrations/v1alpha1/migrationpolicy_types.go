package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MigrationPolicy tunes the live migrations of the instances its selectors match. Of the
// policies that match an instance, the one whose selectors name the most labels applies (ties:
// the first by name); its settings override virt-controller's cluster-wide defaults and are
// recorded in the instance's status.migrationState when a migration starts.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=migrationpolicies,singular=migrationpolicy,scope=Cluster,categories=all;kubevirt
type MigrationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MigrationPolicySpec `json:"spec"`
	// +optional
	Status MigrationPolicyStatus `json:"status,omitempty"`
}

// MigrationPolicySpec is which instances a policy applies to and what it sets.
//
// +kubebuilder:validation:XValidation:rule="!has(self.allowPostCopy) || !self.allowPostCopy",message="allowPostCopy: post-copy migration is not supported by this platform (it needs userfaultfd in the launcher); leave it unset or false"
// +kubebuilder:validation:XValidation:rule="!has(self.allowWorkloadDisruption) || !self.allowWorkloadDisruption",message="allowWorkloadDisruption: pausing or post-copying a guest to force a migration through is not supported by this platform; leave it unset or false"
type MigrationPolicySpec struct {
	// Selectors pick the instances: every label named must match.
	Selectors *Selectors `json:"selectors"`

	// AllowAutoConverge lets QEMU slow down a guest that dirties memory faster than it is
	// sent, so that its migration completes.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty"`
	// BandwidthPerMigration caps each migration's transfer rate, per second (0: unlimited).
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty"`
	// CompletionTimeoutPerGiB bounds a migration, in seconds per GiB of guest memory; one that
	// takes longer is aborted and fails.
	// +kubebuilder:validation:Minimum=1
	// +optional
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty"`
	// AllowPostCopy is refused when true: see the rule above.
	// +optional
	AllowPostCopy *bool `json:"allowPostCopy,omitempty"`
	// AllowWorkloadDisruption is refused when true: see the rule above.
	// +optional
	AllowWorkloadDisruption *bool `json:"allowWorkloadDisruption,omitempty"`
}

// LabelSelector is a set of labels that must all be present with these values.
type LabelSelector map[string]string

// Selectors match an instance by its own labels and by its namespace's.
type Selectors struct {
	// +optional
	NamespaceSelector LabelSelector `json:"namespaceSelector,omitempty"`
	// +optional
	VirtualMachineInstanceSelector LabelSelector `json:"virtualMachineInstanceSelector,omitempty"`
}

// MigrationPolicyStatus is empty, as KubeVirt's.
type MigrationPolicyStatus struct{}

// MigrationPolicyList is a list of MigrationPolicies.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type MigrationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MigrationPolicy `json:"items"`
}
