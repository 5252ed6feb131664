package vmctl

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// ErrVolumeMapping is wrapped by the errors of --pod-volume that the pod or the prototype
// does not fit.
var ErrVolumeMapping = errors.New("cannot bind the prototype's volume to the pod's")

// bindPodVolumes gives the clone the pod's own claims: each prototype volume named in
// podVolumes (prototype volume -> pod volume) becomes the claim of that pod volume, so every
// replica of a StatefulSet (volumeClaimTemplates) or every pod with a generic ephemeral
// volume has a disk of its own, and a StatefulSet pod made again under its name finds its
// disk again.
func bindPodVolumes(spec *v1.VirtualMachineInstanceSpec, pod *corev1.Pod, podVolumes map[string]string) error {
	for _, protoVolume := range slices.Sorted(maps.Keys(podVolumes)) {
		podVolume := podVolumes[protoVolume]
		i := slices.IndexFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == protoVolume })
		if i < 0 {
			return fmt.Errorf("%w: the prototype has no volume %q (--pod-volume %s=%s)", ErrVolumeMapping, protoVolume, protoVolume, podVolume)
		}
		claim, err := podClaim(pod, podVolume)
		if err != nil {
			return fmt.Errorf("%w: --pod-volume %s=%s: %v", ErrVolumeMapping, protoVolume, podVolume, err)
		}
		spec.Volumes[i].VolumeSource = v1.VolumeSource{PersistentVolumeClaim: claim}
	}
	return nil
}

// podClaim is the claim behind one of the pod's volumes: a persistentVolumeClaim's (a
// StatefulSet's volumeClaimTemplates become those), or the one Kubernetes makes for a generic
// ephemeral volume, <pod>-<volume>.
func podClaim(pod *corev1.Pod, name string) (*v1.PersistentVolumeClaimVolumeSource, error) {
	i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("pod %s has no volume %q (a StatefulSet names its volumes after its volumeClaimTemplates)", pod.Name, name)
	}
	switch vol := pod.Spec.Volumes[i]; {
	case vol.PersistentVolumeClaim != nil:
		return &v1.PersistentVolumeClaimVolumeSource{ClaimName: vol.PersistentVolumeClaim.ClaimName, ReadOnly: vol.PersistentVolumeClaim.ReadOnly}, nil
	case vol.Ephemeral != nil:
		return &v1.PersistentVolumeClaimVolumeSource{ClaimName: pod.Name + "-" + vol.Name}, nil
	default:
		return nil, fmt.Errorf("pod %s's volume %q is neither a persistentVolumeClaim nor an ephemeral volume", pod.Name, name)
	}
}

// SharedVolumes lists the prototype's volumes every clone would open read-write at once: PVCs
// not marked readOnly and not bound to each pod's own claim (podVolumes). Container disks,
// empty disks and cloud-init are per instance.
func SharedVolumes(proto *v1.VirtualMachine, podVolumes map[string]string) []string {
	if proto.Spec.Template == nil {
		return nil
	}
	var shared []string
	for _, vol := range proto.Spec.Template.Spec.Volumes {
		if _, own := podVolumes[vol.Name]; own {
			continue
		}
		if pvc := vol.PersistentVolumeClaim; pvc != nil && !pvc.ReadOnly {
			shared = append(shared, fmt.Sprintf("%s (PVC %s)", vol.Name, pvc.ClaimName))
		}
	}
	return shared
}
