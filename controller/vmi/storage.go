package vmi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// The launcher pod's emptyDirs are on the node's disk, shared by every tenant of the node, so
// each has a sizeLimit: a guest that fills its disks, or floods its console, gets its own pod
// evicted by the kubelet and never fills the node.
var (
	// PrivateOverhead is what the private emptyDir holds besides disks: libvirt's home and
	// logs, the cloud-init ISO, the kernelBoot files and the console log, which the launcher
	// caps (layout.ConsoleLogMax).
	PrivateOverhead = resource.MustParse("256Mi")
	// DefaultContainerDiskLimit is what the guest's writes to one containerDisk (its qcow2 overlay) may
	// take when virt-controller is not told otherwise (--container-disk-limit).
	DefaultContainerDiskLimit = resource.MustParse("10Gi")
	// toolsLimit holds the virt-launcher binary the tools init container copies.
	toolsLimit = resource.MustParse("128Mi")
)

// privateSizeLimit covers the overhead, each emptyDisk's capacity and each containerDisk's
// limit. The ephemeral-storage request is the overhead only: disks are sparse and grow as the
// guest writes, and KubeVirt does not reserve them either.
func privateSizeLimit(vmi *v1.VirtualMachineInstance, cfg PodConfig) *resource.Quantity {
	limit := PrivateOverhead.DeepCopy()
	perContainerDisk := cfg.ContainerDiskLimit
	if perContainerDisk.IsZero() {
		perContainerDisk = DefaultContainerDiskLimit
	}
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case vol.EmptyDisk != nil:
			limit.Add(vol.EmptyDisk.Capacity)
		case vol.ContainerDisk != nil:
			limit.Add(perContainerDisk)
		}
	}
	return &limit
}

// ephemeralRequest is the compute container's share of the node's disk for the scheduler.
func ephemeralRequest() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceEphemeralStorage: PrivateOverhead.DeepCopy()}
}
