// Package v1alpha1 is KubeVirt's migrations.kubevirt.io/v1alpha1 API: MigrationPolicy, the
// cluster-wide object that tunes live migrations (bandwidth, completion timeout,
// auto-converge) of the instances its selectors match. Field names and JSON follow KubeVirt's
// so its manifests apply unchanged.
//
// +k8s:deepcopy-gen=package
// +groupName=migrations.kubevirt.io
package v1alpha1
