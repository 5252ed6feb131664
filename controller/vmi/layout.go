package vmi

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// The launcher pod's layout, as docs/node.md describes it: the handler and the launcher are
// written against these paths.
const (
	// PrivateDir is the emptyDir every container of the pod shares: libvirt's socket, the
	// console log and the guest's disks live there, and the handler reaches it on the node.
	PrivateDir    = "/var/run/kubevirt-private"
	privateVolume = "private"
	// toolsDir holds a copy of the static virt-launcher binary, so init containers running
	// arbitrary disk images can copy their files out with it.
	toolsDir    = "/var/run/vmctl-tools"
	toolsVolume = "tools"
	toolsBinary = toolsDir + "/virt-launcher"
)

// DiskDir is where a volume's disk files are, inside the pod.
func DiskDir(volume string) string { return path.Join(PrivateDir, "vmi-disks", volume) }

// KernelBootDir holds the kernel and initrd of a kernelBoot guest, inside the pod.
const KernelBootDir = PrivateDir + "/kernel-boot"

// launcherCapabilities are what libvirtd and QEMU need in an unprivileged pod (spawning QEMU
// as root: SETPCAP, SETUID, SETGID, DAC_OVERRIDE) plus what masquerade networking needs (a
// tap device: NET_ADMIN, MKNOD), as measured in ../shared/notes/launcher-pod.md.
var launcherCapabilities = []corev1.Capability{"NET_ADMIN", "MKNOD", "SETPCAP", "SETUID", "SETGID", "DAC_OVERRIDE"}

func podVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: privateVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: toolsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
}

var (
	privateMount = corev1.VolumeMount{Name: privateVolume, MountPath: PrivateDir}
	toolsMount   = corev1.VolumeMount{Name: toolsVolume, MountPath: toolsDir, ReadOnly: true}
)

// initContainers copy what the guest boots from out of its images: the virt-launcher binary
// first, then every containerDisk and the kernelBoot files, each from its own image.
func initContainers(vmi *v1.VirtualMachineInstance, cfg PodConfig) []corev1.Container {
	containers := []corev1.Container{{
		Name:         "tools",
		Image:        cfg.LauncherImage,
		Command:      []string{"cp", "/usr/bin/virt-launcher", toolsBinary},
		VolumeMounts: []corev1.VolumeMount{{Name: toolsVolume, MountPath: toolsDir}},
	}}
	for _, vol := range vmi.Spec.Volumes {
		cd := vol.ContainerDisk
		if cd == nil {
			continue
		}
		src := cd.Path
		if src == "" {
			src = "/disk"
		}
		containers = append(containers, copier("volume-"+vol.Name, cd.Image, cd.ImagePullPolicy,
			[]string{toolsBinary, "copy-disk", src, DiskDir(vol.Name)}))
	}
	if kb := kernelBoot(vmi); kb != nil {
		args := []string{toolsBinary, "copy-file"}
		if kb.KernelPath != "" {
			args = append(args, kb.KernelPath, path.Join(KernelBootDir, "kernel"))
		}
		if kb.InitrdPath != "" {
			args = append(args, kb.InitrdPath, path.Join(KernelBootDir, "initrd"))
		}
		containers = append(containers, copier("kernel-boot", kb.Image, kb.ImagePullPolicy, args))
	}
	return containers
}

func copier(name, image string, pull corev1.PullPolicy, command []string) corev1.Container {
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	return corev1.Container{
		Name:            name,
		Image:           image,
		ImagePullPolicy: pull,
		Command:         command,
		VolumeMounts:    []corev1.VolumeMount{privateMount, toolsMount},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

func kernelBoot(vmi *v1.VirtualMachineInstance) *v1.KernelBootContainer {
	fw := vmi.Spec.Domain.Firmware
	if fw == nil || fw.KernelBoot == nil {
		return nil
	}
	return fw.KernelBoot.Container
}

// pullSecrets are the image pull secrets the disk images name.
func pullSecrets(vmi *v1.VirtualMachineInstance) []corev1.LocalObjectReference {
	var refs []corev1.LocalObjectReference
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			refs = append(refs, corev1.LocalObjectReference{Name: name})
		}
	}
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil {
			add(vol.ContainerDisk.ImagePullSecret)
		}
	}
	if kb := kernelBoot(vmi); kb != nil {
		add(kb.ImagePullSecret)
	}
	return refs
}
