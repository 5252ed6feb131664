package vmi

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// liveMigratable is the instance's LiveMigratable condition, as KubeVirt words it: False when
// a disk cannot follow the guest (a PVC not ReadWriteMany, which only one node may mount; a
// hostDisk not marked shared; a persistent TPM's or EFI store's claim; a hook sidecar's claim
// not ReadWriteMany) or an interface cannot (bridge binding on the pod network, whose
// address belongs to the pod; SR-IOV, a device of one node), or the instance has a filesystem
// (virtiofs, as in KubeVirt). containerDisks, emptyDisks and ephemeral disks are copied with
// the memory (block migration); config disks are made again.
func liveMigratable(vmi *v1.VirtualMachineInstance, pvcs corelisters.PersistentVolumeClaimLister) v1.VirtualMachineInstanceCondition {
	notMigratable := func(reason, format string, args ...any) v1.VirtualMachineInstanceCondition {
		return v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
			Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	podNetworks := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		podNetworks[n.Name] = n.Pod != nil
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		switch {
		case iface.Bridge != nil && podNetworks[iface.Name]:
			return notMigratable(v1.VirtualMachineInstanceReasonInterfaceNotMigratable,
				"cannot migrate VMI which does not use masquerade to connect to the pod network (interface %s uses bridge)", iface.Name)
		case iface.SRIOV != nil:
			return notMigratable(v1.VirtualMachineInstanceReasonInterfaceNotMigratable,
				"cannot migrate VMI with an SR-IOV interface (%s): its device belongs to one node", iface.Name)
		}
	}
	if fs := vmi.Spec.Domain.Devices.Filesystems; len(fs) > 0 {
		// virtiofsd's open files and the guest's view of them live in this node's process.
		return notMigratable(v1.VirtualMachineInstanceReasonVirtIOFSNotMigratable,
			"cannot migrate VMI: filesystem %s is shared through virtiofs", fs[0].Name)
	}
	var claims []string
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			claims = append(claims, vol.PersistentVolumeClaim.ClaimName)
		case vol.DataVolume != nil:
			claims = append(claims, vol.DataVolume.Name) // CDI names the PVC after its DataVolume
		case vol.HostDisk != nil && (vol.HostDisk.Shared == nil || !*vol.HostDisk.Shared):
			return notMigratable(v1.VirtualMachineInstanceReasonDisksNotMigratable,
				"cannot migrate VMI: hostDisk %s is not shared (set shared: true when its path is on storage every node sees)", vol.Name)
		}
	}
	// The target pod mounts the hook sidecars' claims too.
	claims = append(claims, sidecarClaims(vmi)...)
	for _, claim := range claims {
		pvc, err := pvcs.PersistentVolumeClaims(vmi.Namespace).Get(claim)
		switch {
		case apierrors.IsNotFound(err):
			return notMigratable(v1.VirtualMachineInstanceReasonDisksNotMigratable, "cannot migrate VMI: PVC %s does not exist", claim)
		case err != nil:
			return notMigratable(v1.VirtualMachineInstanceReasonDisksNotMigratable, "cannot migrate VMI: PVC %s: %v", claim, err)
		case !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany):
			return notMigratable(v1.VirtualMachineInstanceReasonDisksNotMigratable,
				"cannot migrate VMI: PVC %s is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", claim)
		}
	}
	if vmi.Spec.KeepsState() {
		// The state claim is ReadWriteOnce (vmstate.go), and swtpm would need its state on
		// storage both nodes share.
		return notMigratable(v1.VirtualMachineInstanceReasonDisksNotMigratable,
			"cannot migrate VMI: its persistent TPM or EFI state (PVC %s) is not shared", stateClaim(vmi))
	}
	return v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionTrue}
}
