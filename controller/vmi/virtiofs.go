package vmi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// A filesystem (spec.domain.devices.filesystems, virtiofs) is served, as in KubeVirt, by a
// virtiofsd of its own in a container of the launcher pod (virtiofs-<name>), which mounts only
// the shared volume and the sockets' emptyDir; QEMU, in compute, connects to its socket.
// virtiofsd runs as the launcher's user without capabilities (--sandbox=none: it may neither
// chroot nor unshare namespaces here), so the guest reaches exactly what that user may.

// virtiofsSharedDir is where a virtiofsd container mounts the volume it shares.
const virtiofsSharedDir = "/shared"

// virtiofsResources fit one virtiofsd serving a guest's file requests: a few MiB and its
// thread pool. Limits as for the other helpers, so quota-bound namespaces admit the pod.
var virtiofsResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("80Mi")},
}

var virtiofsSocketsMount = corev1.VolumeMount{Name: layout.VirtiofsSocketsVolume, MountPath: layout.VirtiofsSocketsDir}

// virtiofsContainers are one native sidecar per filesystem: started before compute, so its
// socket is there when QEMU starts; restarted if it exits (virtiofsd ends when QEMU
// disconnects); stopped after compute.
// A block-mode claim has no file system to share: the handler fails the instance saying so.
func virtiofsContainers(vmi *v1.VirtualMachineInstance, cfg PodConfig) []corev1.Container {
	var out []corev1.Container
	for _, fs := range vmi.Spec.Domain.Devices.Filesystems {
		mount, ok := sharedVolumeMount(vmi, fs.Name)
		if !ok || cfg.BlockVolumes[fs.Name] {
			continue // admission refuses the other kinds
		}
		out = append(out, sidecar(corev1.Container{
			Name:            "virtiofs-" + fs.Name,
			Image:           cfg.VirtiofsdImage,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/usr/libexec/virtiofsd", "--socket-path=" + layout.VirtiofsSocket(fs.Name),
				"--shared-dir=" + virtiofsSharedDir, "--sandbox=none", "--cache=auto"},
			Resources:       *virtiofsResources.DeepCopy(),
			VolumeMounts:    []corev1.VolumeMount{virtiofsSocketsMount, mount},
			SecurityContext: containerSecurityContext(),
		}))
	}
	return out
}

// sharedVolumeMount mounts the pod volume behind the instance's volume name where virtiofsd
// shares it: the claim, writable unless it is read-only; the config volume, read-only.
func sharedVolumeMount(vmi *v1.VirtualMachineInstance, name string) (corev1.VolumeMount, bool) {
	for _, vol := range vmi.Spec.Volumes {
		if vol.Name != name {
			continue
		}
		if pvc, ok := vol.Claim(); ok && vol.Ephemeral == nil {
			return corev1.VolumeMount{Name: pvcVolume(vol.Name), MountPath: virtiofsSharedDir, ReadOnly: pvc.ReadOnly}, true
		}
		if _, ok := configVolumeSource(vol); ok && vol.Sysprep == nil {
			return corev1.VolumeMount{Name: layout.ConfigVolume(vol.Name), MountPath: virtiofsSharedDir, ReadOnly: true}, true
		}
	}
	return corev1.VolumeMount{}, false
}

// virtiofsVolumes is the sockets' emptyDir, when the instance has a filesystem.
func virtiofsVolumes(vmi *v1.VirtualMachineInstance) []corev1.Volume {
	if len(vmi.Spec.Domain.Devices.Filesystems) == 0 {
		return nil
	}
	return []corev1.Volume{{Name: layout.VirtiofsSocketsVolume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}}
}
