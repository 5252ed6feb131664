package vmi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// hookSidecarResources fit a hook that rewrites a domain's XML once per start, in a shell
// script or a small program.
var hookSidecarResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
}

var socketsMount = corev1.VolumeMount{Name: hooks.SocketsVolume, MountPath: hooks.SocketsDir}

// hookSidecars are the instance's hook sidecars (hooks.kubevirt.io/hookSidecars, admitted by
// virt-api's Sidecar gate), as native sidecars: running before compute, so virt-handler finds
// their sockets when it defines the domain, and stopped after it. A sidecar with a ConfigMap
// script and no image runs the platform's sidecar-shim, as in KubeVirt. An annotation that
// does not parse gives none here; virt-handler fails the instance saying why.
func hookSidecars(vmi *v1.VirtualMachineInstance, shimImage string) []corev1.Container {
	list, err := hooks.Sidecars(vmi.Annotations)
	if err != nil {
		return nil
	}
	var out []corev1.Container
	for i, sc := range list {
		c := corev1.Container{
			Name:            hooks.ContainerName(i),
			Image:           sc.Image,
			ImagePullPolicy: sc.ImagePullPolicy,
			Command:         sc.Command,
			Args:            sc.Args,
			Resources:       *hookSidecarResources.DeepCopy(),
			VolumeMounts:    []corev1.VolumeMount{socketsMount},
			SecurityContext: containerSecurityContext(),
		}
		if c.Image == "" {
			c.Image = shimImage
		}
		if c.ImagePullPolicy == "" {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
		if cm := sc.ConfigMap; cm != nil {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: hooks.ScriptVolume(i), MountPath: cm.HookPath, SubPath: cm.Key, ReadOnly: true})
		}
		if pvc := sc.PVC; pvc != nil {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: hooks.ClaimVolume(i), MountPath: pvc.VolumePath})
		}
		out = append(out, sidecar(c))
	}
	return out
}

// hookSidecarVolumes are the sockets' emptyDir, each sidecar's script, executable, and each
// sidecar's claim.
func hookSidecarVolumes(vmi *v1.VirtualMachineInstance) []corev1.Volume {
	list, err := hooks.Sidecars(vmi.Annotations)
	if err != nil || len(list) == 0 {
		return nil
	}
	volumes := []corev1.Volume{{Name: hooks.SocketsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}}
	for i, sc := range list {
		if cm := sc.ConfigMap; cm != nil {
			volumes = append(volumes, corev1.Volume{Name: hooks.ScriptVolume(i), VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
				Items:                []corev1.KeyToPath{{Key: cm.Key, Path: cm.Key}},
				DefaultMode:          ptr.To(int32(0o755)),
			}}})
		}
		if pvc := sc.PVC; pvc != nil {
			volumes = append(volumes, corev1.Volume{Name: hooks.ClaimVolume(i), VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}})
		}
	}
	return volumes
}

// hookSidecarComputeMounts put each sidecar claim with a sharedComputePath in the compute
// container too, where QEMU opens what the hook points the domain at.
func hookSidecarComputeMounts(vmi *v1.VirtualMachineInstance) []corev1.VolumeMount {
	list, _ := hooks.Sidecars(vmi.Annotations)
	var mounts []corev1.VolumeMount
	for i, sc := range list {
		if sc.PVC != nil && sc.PVC.SharedComputePath != "" {
			mounts = append(mounts, corev1.VolumeMount{Name: hooks.ClaimVolume(i), MountPath: sc.PVC.SharedComputePath})
		}
	}
	return mounts
}

// sidecarClaims are the claims the hook sidecars mount, which the pod needs as it needs the
// volumes' claims.
func sidecarClaims(vmi *v1.VirtualMachineInstance) []string {
	list, _ := hooks.Sidecars(vmi.Annotations)
	var claims []string
	for _, sc := range list {
		if sc.PVC != nil && sc.PVC.Name != "" {
			claims = append(claims, sc.PVC.Name)
		}
	}
	return claims
}
