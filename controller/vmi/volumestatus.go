package vmi

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// setVolumeStatus lists the instance's volumes in status.volumeStatus, as KubeVirt does, with
// what each claim says of itself (from the lister: no API call); virt-handler adds the
// targets once the guest runs. Set with the status writes that have a pod, so it costs no
// write of its own.
func (c *Controller) setVolumeStatus(vmi *v1.VirtualMachineInstance) {
	vmi.Status.SyncVolumeStatus(vmi.Spec.Volumes, func(vs *v1.VolumeStatus, vol *v1.Volume) {
		claim, ok := vol.Claim()
		if !ok {
			return
		}
		pvc, err := c.pvcs.PersistentVolumeClaims(vmi.Namespace).Get(claim.ClaimName)
		if err != nil {
			return // keep what was said while the claim is out of the cache
		}
		vs.PersistentVolumeClaimInfo = claimInfo(pvc)
	})
}

func claimInfo(pvc *corev1.PersistentVolumeClaim) *v1.PersistentVolumeClaimInfo {
	return &v1.PersistentVolumeClaimInfo{
		ClaimName:   pvc.Name,
		AccessModes: pvc.Spec.AccessModes,
		VolumeMode:  pvc.Spec.VolumeMode,
		Capacity:    pvc.Status.Capacity,
		Requests:    pvc.Spec.Resources.Requests,
	}
}
