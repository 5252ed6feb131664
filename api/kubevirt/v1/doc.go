// Package v1 holds the kubevirt.io/v1 API types this project serves: VirtualMachine,
// VirtualMachineInstance and VirtualMachineInstanceReplicaSet. Field names follow KubeVirt's
// v1 API so that existing manifests apply unchanged; only a subset of fields is supported.
//
// +k8s:deepcopy-gen=package
// +groupName=kubevirt.io
package v1
