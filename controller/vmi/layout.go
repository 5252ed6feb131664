package vmi

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// podSecurityContext makes every container of the pod run as the launcher's unprivileged user
// (KubeVirt's 107) with the runtime's default seccomp profile: libvirt runs as that user's
// session daemon and QEMU as that user, so the pod passes Pod Security "restricted". fsGroup
// makes the pod's volumes writable for it.
func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsUser:      ptr.To(int64(layout.LauncherUID)),
		RunAsGroup:     ptr.To(int64(layout.LauncherGID)),
		RunAsNonRoot:   ptr.To(true),
		FSGroup:        ptr.To(int64(layout.LauncherGID)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurityContext is every container's: no capability at all (what needs one, the
// pod network, virt-handler does from the node) and no way to gain any.
func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// launcherArgs tell the launcher which domain it runs, how long a shutdown may take, and
// whether the guest has a masquerade or bridge NIC to wire.
func launcherArgs(vmi *v1.VirtualMachineInstance, grace int64) []string {
	args := []string{"--name", vmi.Name, "--namespace", vmi.Namespace, "--uid", string(vmi.UID),
		"--grace-period", strconv.FormatInt(grace, 10)}
	if vmi.Spec.Hostname != "" {
		args = append(args, "--hostname", vmi.Spec.Hostname)
	}
	network := "none"
	if vmi.Spec.HasPodInterface() {
		network = "masquerade"
		if vmi.Spec.BridgeBound() {
			network = "bridge"
		}
		args = append(args, dhcpArgs(vmi.Spec.Domain.Devices.Interfaces[0].DHCPOptions)...)
	}
	args = append(args, "--network", network)
	// Keys and passwords set through the guest agent: the launcher reads them from the
	// Secret's mount, which the kubelet keeps current, so an edited Secret reaches the guest.
	secrets := v1.SecretsOf(&vmi.Spec)
	mount := func(secret string) string {
		return path.Join(layout.SecretsDir, secretVolume(slices.Index(secrets, secret)))
	}
	for _, cred := range vmi.Spec.AccessCredentials {
		if k := cred.SSHPublicKey; k != nil && k.Source.Secret != nil && k.PropagationMethod.QemuGuestAgent != nil && len(k.PropagationMethod.QemuGuestAgent.Users) > 0 {
			args = append(args, "--agent-ssh-keys", mount(k.Source.Secret.SecretName)+":"+strings.Join(k.PropagationMethod.QemuGuestAgent.Users, ","))
		}
		if p := cred.UserPassword; p != nil && p.Source.Secret != nil && p.PropagationMethod.QemuGuestAgent != nil {
			args = append(args, "--agent-passwords", mount(p.Source.Secret.SecretName))
		}
	}
	if vmi.Spec.DownwardMetricsVolume() {
		args = append(args, "--downward-metrics-disk")
	}
	if vmi.Spec.DownwardMetricsPort() {
		args = append(args, "--downward-metrics-port")
	}
	if servesMetrics(vmi) {
		args = append(args, "--node-name", "$("+nodeNameEnv+")")
	}
	return args
}

// nodeNameEnv is the launcher's node, which downward metrics report (HostName).
const nodeNameEnv = "NODE_NAME"

func servesMetrics(vmi *v1.VirtualMachineInstance) bool {
	return vmi.Spec.DownwardMetricsVolume() || vmi.Spec.DownwardMetricsPort()
}

// launcherEnv is the compute container's environment: the node's name for the downward
// metrics, nothing otherwise.
func launcherEnv(vmi *v1.VirtualMachineInstance) []corev1.EnvVar {
	if !servesMetrics(vmi) {
		return nil
	}
	return []corev1.EnvVar{{Name: nodeNameEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
}

// dhcpArgs hand the pod interface's dhcpOptions to the launcher, whose DHCP server puts them
// in the guest's lease.
func dhcpArgs(o *v1.DHCPOptions) []string {
	if o == nil {
		return nil
	}
	var args []string
	if o.BootFileName != "" {
		args = append(args, "--dhcp-boot-file-name", o.BootFileName)
	}
	if o.TFTPServerName != "" {
		args = append(args, "--dhcp-tftp-server-name", o.TFTPServerName)
	}
	for _, s := range o.NTPServers {
		args = append(args, "--dhcp-ntp-server", s)
	}
	for _, p := range o.PrivateOptions {
		args = append(args, "--dhcp-private-option", fmt.Sprintf("%d=%s", p.Option, p.Value))
	}
	return args
}

// podVolumes are the shared emptyDirs, every PVC the guest uses (its disk.img is the disk), the
// directory of each hostDisk, the VM's state claim, and every secret cloud-init reads, which
// the handler finds where the kubelet put them.
func podVolumes(vmi *v1.VirtualMachineInstance, cfg PodConfig) []corev1.Volume {
	volumes := []corev1.Volume{
		{Name: layout.PrivateVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: privateSizeLimit(vmi, cfg)}}},
	}
	if needsTools(vmi) {
		volumes = append(volumes, corev1.Volume{Name: toolsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(toolsLimit.DeepCopy())}}})
	}
	for _, vol := range vmi.Spec.Volumes {
		if pvc, ok := vol.Claim(); ok {
			volumes = append(volumes, corev1.Volume{Name: pvcVolume(vol.Name), VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.ClaimName, ReadOnly: pvc.ReadOnly}}})
		}
	}
	volumes = append(volumes, hostDiskVolumes(vmi)...)
	volumes = append(volumes, hookSidecarVolumes(vmi)...)
	volumes = append(volumes, virtiofsVolumes(vmi)...)
	for _, vol := range vmi.Spec.Volumes {
		if src, ok := configVolumeSource(vol); ok {
			volumes = append(volumes, corev1.Volume{Name: layout.ConfigVolume(vol.Name), VolumeSource: src})
		}
	}
	if vmi.Spec.KeepsState() {
		volumes = append(volumes, corev1.Volume{Name: layout.VMStateVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: stateClaim(vmi)}}})
	}
	if _, ok := hugepageSize(vmi); ok {
		volumes = append(volumes, corev1.Volume{Name: hugepagesVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}})
	}
	// Optional: a missing secret must not hold the pod in ContainerCreating, where nobody
	// says why; virt-handler finds no volume and fails the instance saying which secret.
	for i, name := range v1.SecretsOf(&vmi.Spec) {
		volumes = append(volumes, corev1.Volume{Name: secretVolume(i),
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, Optional: ptr.To(true)}}})
	}
	return volumes
}

// hugepagesVolume holds the guest's huge pages.
const hugepagesVolume = "hugepages"

// secretVolume names the pod volume of the instance's i-th Secret (v1.SecretsOf).
func secretVolume(i int) string { return fmt.Sprintf("secret-%d", i+1) }

// pvcVolume names a PVC's pod volume apart from the pod's own volumes.
func pvcVolume(volume string) string { return "pvc-" + volume }

// computeMounts put each PVC with a file system where its volume's disk files go (a
// block-mode one is a device: blockDevices), each hostDisk's directory, the hook sidecars'
// claims shared with compute, and the virtiofsd sockets. A volume shared as a filesystem
// is its virtiofsd container's alone.
func computeMounts(vmi *v1.VirtualMachineInstance, block map[string]bool) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{privateMount}
	shared := vmi.Spec.SharedVolumes()
	for _, vol := range vmi.Spec.Volumes {
		if pvc, ok := vol.Claim(); ok && !block[vol.Name] && !shared[vol.Name] {
			mounts = append(mounts, corev1.VolumeMount{Name: pvcVolume(vol.Name), MountPath: layout.InPod(layout.DiskRel(vol.Name)), ReadOnly: pvc.ReadOnly})
		}
	}
	mounts = append(mounts, hostDiskMounts(vmi)...)
	mounts = append(mounts, hookSidecarComputeMounts(vmi)...)
	for _, vol := range vmi.Spec.Volumes {
		if _, ok := configVolumeSource(vol); ok && !shared[vol.Name] {
			mounts = append(mounts, corev1.VolumeMount{Name: layout.ConfigVolume(vol.Name), MountPath: path.Join(layout.ConfigVolumesDir, vol.Name), ReadOnly: true})
		}
	}
	if vmi.Spec.KeepsState() {
		mounts = append(mounts, corev1.VolumeMount{Name: layout.VMStateVolume, MountPath: layout.VMStateDir})
	}
	if _, ok := hugepageSize(vmi); ok {
		mounts = append(mounts, corev1.VolumeMount{Name: hugepagesVolume, MountPath: layout.HugepagesDir})
	}
	if len(shared) > 0 {
		mounts = append(mounts, virtiofsSocketsMount)
	}
	// The kubelet sets up only the volumes a container mounts; virt-handler reads these
	// through the kubelet's directory, the launcher those whose keys go through the guest agent.
	for i := range v1.SecretsOf(&vmi.Spec) {
		mounts = append(mounts, corev1.VolumeMount{Name: secretVolume(i), MountPath: path.Join(layout.SecretsDir, secretVolume(i)), ReadOnly: true})
	}
	return mounts
}

var (
	privateMount = corev1.VolumeMount{Name: layout.PrivateVolume, MountPath: layout.PrivateDir}
	toolsMount   = corev1.VolumeMount{Name: toolsVolume, MountPath: toolsDir, ReadOnly: true}
)

// initContainers prepare what the guest boots from its images: the virt-launcher binary first
// (only when an image container runs it, see needsTools), then the kernelBoot files (copied),
// then one sidecar per containerDisk serving the image in place (launcher/containerdisk), and
// the guest-console-log sidecar, then the filesystems' virtiofsd (virtiofs.go), then the hook
// sidecars (hooksidecars.go). Sidecars (restartPolicy Always) start before compute and are
// stopped after it, and do not hold the pod Running once compute exits. Each requests a little
// CPU and memory, so a namespace whose ResourceQuota counts requests admits the pod.
func initContainers(vmi *v1.VirtualMachineInstance, cfg PodConfig) []corev1.Container {
	containers := helpers(vmi, cfg)
	for i := range containers {
		containers[i].Resources = *helperResources.DeepCopy()
	}
	containers = append(containers, virtiofsContainers(vmi, cfg)...)
	return append(containers, hookSidecars(vmi, cfg.SidecarShimImage)...)
}

// helpers are the launcher pod's init containers and sidecars, in order.
func helpers(vmi *v1.VirtualMachineInstance, cfg PodConfig) []corev1.Container {
	var containers []corev1.Container
	if needsTools(vmi) {
		containers = append(containers, corev1.Container{
			Name:            "tools",
			Image:           cfg.LauncherImage,
			Command:         []string{"cp", "/usr/bin/virt-launcher", toolsBinary},
			VolumeMounts:    []corev1.VolumeMount{{Name: toolsVolume, MountPath: toolsDir}},
			SecurityContext: containerSecurityContext(),
		})
	}
	if kb := kernelBoot(vmi); kb != nil {
		args := []string{toolsBinary, "copy-file"}
		if kb.KernelPath != "" {
			args = append(args, kb.KernelPath, layout.InPod(layout.KernelRel))
		}
		if kb.InitrdPath != "" {
			args = append(args, kb.InitrdPath, layout.InPod(layout.InitrdRel))
		}
		containers = append(containers, imageContainer("kernel-boot", kb.Image, kb.ImagePullPolicy, args))
	}
	for _, vol := range vmi.Spec.Volumes {
		cd := vol.ContainerDisk
		if cd == nil {
			continue
		}
		src := cd.Path
		if src == "" {
			src = "/disk"
		}
		holder := imageContainer("volume-"+vol.Name, cd.Image, cd.ImagePullPolicy,
			[]string{toolsBinary, "hold-disk", src, layout.InPod(layout.DiskRel(vol.Name))})
		containers = append(containers, sidecar(holder))
	}
	devs := vmi.Spec.Domain.Devices
	if !ptr.Deref(devs.AutoattachSerialConsole, true) || !ptr.Deref(devs.LogSerialConsole, true) {
		return containers // no serial console, or its log is not wanted
	}
	return append(containers, sidecar(corev1.Container{
		Name:            GuestConsoleLogContainer,
		Image:           cfg.LauncherImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/usr/bin/virt-launcher", "guest-console-log"},
		// Read-write: it frees the disk space of the log it copied (layout.ConsoleLogMax).
		VolumeMounts:    []corev1.VolumeMount{privateMount},
		SecurityContext: containerSecurityContext(),
	}))
}

// GuestConsoleLogContainer shows the guest's serial console in `kubectl logs` (KubeVirt's name).
const GuestConsoleLogContainer = "guest-console-log"

// helperResources fit a process that only waits (a disk holder) or copies files (tools,
// kernel-boot, the console): the Go runtime's few MiB, with room. With limits too, a
// namespace whose quota counts limits.cpu and limits.memory admits the pod of a VM that sets
// its own (the compute container's are the instance's).
var helperResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("48Mi")},
}

// sidecar makes c a native sidecar: restarted if it exits, stopped after the main container.
func sidecar(c corev1.Container) corev1.Container {
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

// imageContainer runs the virt-launcher binary the tools container copied in a container of
// the user's image (a kernelBoot image, a containerDisk), which may have nothing else to run.
func imageContainer(name, image string, pull corev1.PullPolicy, command []string) corev1.Container {
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	return corev1.Container{
		Name:            name,
		Image:           image,
		ImagePullPolicy: pull,
		Command:         command,
		VolumeMounts:    []corev1.VolumeMount{privateMount, toolsMount},
		SecurityContext: containerSecurityContext(),
	}
}

// needsTools: a container of the user's image (kernelBoot, a containerDisk) runs the copied
// virt-launcher binary. Other VMs (disks on PVCs, cloud-init, emptyDisks) skip the tools init
// container and its emptyDir: one container start less per VM, for the kubelet and the runtime.
func needsTools(vmi *v1.VirtualMachineInstance) bool {
	if kernelBoot(vmi) != nil {
		return true
	}
	return slices.ContainsFunc(vmi.Spec.Volumes, func(v v1.Volume) bool { return v.ContainerDisk != nil })
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
