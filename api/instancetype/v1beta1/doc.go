// Package v1beta1 is KubeVirt's instancetype.kubevirt.io/v1beta1 API: instance types (the
// vCPUs and memory a VirtualMachine gets, and what comes with them) and preferences (the
// values a VirtualMachine's template falls back to), each namespaced and cluster-wide. Field
// names and JSON follow KubeVirt's so its manifests and common-instancetypes apply unchanged;
// a field whose kubevirt.io/v1 counterpart this platform lacks is left out rather than
// accepted and ignored.
//
// +k8s:deepcopy-gen=package
// +groupName=instancetype.kubevirt.io
package v1beta1
