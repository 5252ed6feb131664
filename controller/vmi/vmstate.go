package vmi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// An instance with a persistent TPM or persistent EFI variables keeps that state in a claim
// of its VM's, KubeVirt's backend storage: persistent-state-for-<VM name>, 10Mi of a
// Filesystem volume from the configured storage class (else the cluster's default), owned by
// the VM so that it outlives instances and goes with the VM. An instance without a VM owns
// its own. The compute container mounts it at layout.VMStateDir.

// vmStateSize is KubeVirt's: an EFI variable store is 540 KiB, a TPM's state less.
var vmStateSize = resource.MustParse("10Mi")

// stateClaim names the instance's state claim: a VM's instances carry the VM's name.
func stateClaim(vmi *v1.VirtualMachineInstance) string { return v1.VMStateClaimPrefix + vmi.Name }

// ensureStateClaim creates the state claim of an instance that keeps state, unless it exists.
// It reports whether the claim is yet to appear in the informer; the claim's arrival queues
// the instance again (claimIndex).
func (c *Controller) ensureStateClaim(ctx context.Context, vmi *v1.VirtualMachineInstance) (bool, error) {
	if !vmi.Spec.KeepsState() {
		return false, nil
	}
	name := stateClaim(vmi)
	_, err := c.pvcs.PersistentVolumeClaims(vmi.Namespace).Get(name)
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: vmi.Namespace, OwnerReferences: []metav1.OwnerReference{stateOwner(vmi)}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: vmStateSize}},
		},
	}
	if class := c.config.VMStateStorageClass; class != "" {
		claim.Spec.StorageClassName = &class
	}
	if _, err := c.kube.CoreV1().PersistentVolumeClaims(vmi.Namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	return true, nil
}

// stateOwner is the instance's VM, or the instance itself when no VM controls it.
func stateOwner(vmi *v1.VirtualMachineInstance) metav1.OwnerReference {
	if ref := metav1.GetControllerOf(vmi); ref != nil && ref.Kind == "VirtualMachine" {
		return metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
	}
	return metav1.OwnerReference{APIVersion: v1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstance", Name: vmi.Name, UID: vmi.UID}
}
