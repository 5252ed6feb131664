package vmi

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// The launcher pod's volumes and init containers; launcher/layout has the paths inside them.
const (
	// toolsDir holds a copy of the static virt-launcher binary, so init containers running
	// arbitrary disk images can copy their files out with it.
	toolsDir    = "/var/run/vmctl-tools"
	toolsVolume = "tools"
	toolsBinary = toolsDir + "/virt-launcher"
)

// launcherCapabilities are what libvirtd and QEMU need in an unprivileged pod (spawning QEMU
// as root: SETPCAP, SETUID, SETGID, DAC_OVERRIDE) plus what masquerade networking needs (a
// tap device: NET_ADMIN, MKNOD; the guest's DHCP server on port 67: NET_BIND_SERVICE), as
// measured in ../shared/notes/launcher-pod.md.
var launcherCapabilities = []corev1.Capability{"NET_ADMIN", "MKNOD", "NET_BIND_SERVICE", "SETPCAP", "SETUID", "SETGID", "DAC_OVERRIDE"}

// launcherArgs tell the launcher which domain it runs, how long a shutdown may take, and
// whether the guest has a masquerade NIC to wire (the only pod network binding supported).
func launcherArgs(vmi *v1.VirtualMachineInstance, grace int64) []string {
	args := []string{"--name", vmi.Name, "--namespace", vmi.Namespace, "--uid", string(vmi.UID),
		"--grace-period", strconv.FormatInt(grace, 10)}
	if vmi.Spec.Hostname != "" {
		args = append(args, "--hostname", vmi.Spec.Hostname)
	}
	network := "none"
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if iface.Masquerade != nil {
			network = "masquerade"
		}
	}
	return append(args, "--network", network)
}

// podVolumes are the shared emptyDirs, every PVC the guest uses (its disk.img is the disk),
// and every secret cloud-init reads, which the handler finds where the kubelet put them.
func podVolumes(vmi *v1.VirtualMachineInstance) []corev1.Volume {
	volumes := []corev1.Volume{
		{Name: layout.PrivateVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: toolsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	secrets := map[string]bool{}
	for _, vol := range vmi.Spec.Volumes {
		if pvc := vol.PersistentVolumeClaim; pvc != nil {
			volumes = append(volumes, corev1.Volume{Name: pvcVolume(vol.Name), VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.ClaimName, ReadOnly: pvc.ReadOnly}}})
		}
		if ci := vol.CloudInitNoCloud; ci != nil {
			for _, ref := range []*corev1.LocalObjectReference{ci.UserDataSecretRef, ci.NetworkDataSecretRef} {
				if ref != nil && ref.Name != "" && !secrets[ref.Name] {
					secrets[ref.Name] = true
					volumes = append(volumes, corev1.Volume{Name: fmt.Sprintf("secret-%d", len(secrets)),
						VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ref.Name}}})
				}
			}
		}
	}
	return volumes
}

// pvcVolume names a PVC's pod volume apart from the pod's own volumes.
func pvcVolume(volume string) string { return "pvc-" + volume }

// computeMounts put each PVC where its volume's disk files go.
func computeMounts(vmi *v1.VirtualMachineInstance) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{privateMount}
	for _, vol := range vmi.Spec.Volumes {
		if pvc := vol.PersistentVolumeClaim; pvc != nil {
			mounts = append(mounts, corev1.VolumeMount{Name: pvcVolume(vol.Name), MountPath: layout.InPod(layout.DiskRel(vol.Name)), ReadOnly: pvc.ReadOnly})
		}
	}
	return mounts
}

var (
	privateMount = corev1.VolumeMount{Name: layout.PrivateVolume, MountPath: layout.PrivateDir}
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
			[]string{toolsBinary, "copy-disk", src, layout.InPod(layout.DiskRel(vol.Name))}))
	}
	if kb := kernelBoot(vmi); kb != nil {
		args := []string{toolsBinary, "copy-file"}
		if kb.KernelPath != "" {
			args = append(args, kb.KernelPath, layout.InPod(layout.KernelRel))
		}
		if kb.InitrdPath != "" {
			args = append(args, kb.InitrdPath, layout.InPod(layout.InitrdRel))
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
