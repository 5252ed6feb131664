package vmi

import (
	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// A claim in volumeMode Block is a device, not a file system: the compute container gets it
// as a volumeDevice at layout.BlockDevice (the kubelet refuses to mount it), and the domain
// uses the device itself. Which claims are block-mode is read when the pod is rendered: from
// the lister for an instance's pod, from the instance's volume status for a migration's
// target (the claims of a running instance are in it).

// BlockVolumes are the instance's volumes whose claim is block-mode, by the lister.
func BlockVolumes(vmi *v1.VirtualMachineInstance, pvcs corelisters.PersistentVolumeClaimLister) (map[string]bool, error) {
	block := map[string]bool{}
	for _, vol := range vmi.Spec.Volumes {
		claim, ok := vol.Claim()
		if !ok {
			continue
		}
		pvc, err := pvcs.PersistentVolumeClaims(vmi.Namespace).Get(claim.ClaimName)
		if err != nil {
			return nil, err
		}
		if isBlock(pvc.Spec.VolumeMode) {
			block[vol.Name] = true
		}
	}
	return block, nil
}

// BlockVolumesInStatus are the instance's volumes whose claim its volume status says is
// block-mode.
func BlockVolumesInStatus(vmi *v1.VirtualMachineInstance) map[string]bool {
	block := map[string]bool{}
	for _, vs := range vmi.Status.VolumeStatus {
		if info := vs.PersistentVolumeClaimInfo; info != nil && isBlock(info.VolumeMode) {
			block[vs.Name] = true
		}
	}
	return block
}

func isBlock(mode *corev1.PersistentVolumeMode) bool {
	return mode != nil && *mode == corev1.PersistentVolumeBlock
}

// blockDevices are the compute container's devices of the block-mode claims.
func blockDevices(vmi *v1.VirtualMachineInstance, block map[string]bool) []corev1.VolumeDevice {
	var devices []corev1.VolumeDevice
	for _, vol := range vmi.Spec.Volumes {
		if block[vol.Name] {
			devices = append(devices, corev1.VolumeDevice{Name: pvcVolume(vol.Name), DevicePath: layout.BlockDevice(vol.Name)})
		}
	}
	return devices
}
