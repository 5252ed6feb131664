package vmi

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// LauncherOverhead is the memory a launcher pod needs beyond the guest's RAM: libvirtd
// (~30 MiB) and QEMU's own (~60-70 MiB with TCG, whose translation cache dominates), as
// measured on this project's nodes.
var LauncherOverhead = resource.MustParse("128Mi")

// TPMOverhead is added for a guest with a TPM: swtpm beside QEMU (7 MiB measured) and, while
// the domain starts, swtpm_setup manufacturing its state.
var TPMOverhead = resource.MustParse("16Mi")

// GraphicsOverhead is added for a guest with a display: its VGA device's 16 MiB of video
// RAM, which the guest may fill (KubeVirt adds the same).
var GraphicsOverhead = resource.MustParse("16Mi")

// launcherOverhead is the launcher pod's memory beyond the guest's RAM.
func launcherOverhead(vmi *v1.VirtualMachineInstance) resource.Quantity {
	overhead := LauncherOverhead.DeepCopy()
	if vmi.Spec.Domain.Devices.TPM.IsEnabled() {
		overhead.Add(TPMOverhead)
	}
	if vmi.Spec.Domain.Devices.GraphicsAttached() {
		overhead.Add(GraphicsOverhead)
	}
	return overhead
}

// launcherContainer is the launcher pod's main container, running virt-launcher.
const launcherContainer = "compute"

// shutdownMargin is added to the instance's grace period for the launcher's own pod: after the
// guest's grace period the launcher still has to kill the domain and exit.
const shutdownMargin = 15

// PodConfig is what the cluster decides about every launcher pod.
type PodConfig struct {
	// LauncherImage runs libvirt and QEMU.
	LauncherImage string
	// SidecarShimImage runs a hook sidecar's ConfigMap script when the sidecar names no image.
	SidecarShimImage string
	// VirtiofsdImage runs each filesystem's virtiofsd.
	VirtiofsdImage string
	// UseEmulation runs guests under QEMU's emulator (TCG): launcher pods request no
	// /dev/kvm, so they fit nodes whose KVM is unusable (KubeVirt's useEmulation).
	UseEmulation bool
	// ContainerDiskLimit bounds the writes to one containerDisk in the pod (zero: the default).
	ContainerDiskLimit resource.Quantity
	// CPUAllocationRatio is how many vCPUs share one requested CPU where the instance
	// requests none (KubeVirt's cpuAllocationRatio; zero: DefaultCPUAllocationRatio).
	CPUAllocationRatio int64
	// VMStateStorageClass is the storage class of the claims keeping VMs' persistent TPM
	// and EFI state (KubeVirt's vmStateStorageClass; empty: the cluster's default).
	VMStateStorageClass string
	// AutoLimits is what the instance's namespace asks of the compute container's limits;
	// the controllers set it for each pod (Quotas.AutoLimits).
	AutoLimits AutoLimits
	// BlockVolumes are the instance's volumes whose claim is block-mode; the controllers set
	// it for each pod (BlockVolumes, BlockVolumesInStatus).
	BlockVolumes map[string]bool
}

// DefaultCPUAllocationRatio is KubeVirt's: a vCPU requests a tenth of a CPU.
const DefaultCPUAllocationRatio = 10

// RenderLauncherPod is the pod that runs an instance: owned by it, carrying its labels (so a
// Service selecting the VM's labels reaches the guest) but the node label, which names the
// node of the instance's first pod, not of a migration's target, and its placement, sized for
// the guest plus the launcher's overhead.
func RenderLauncherPod(vmi *v1.VirtualMachineInstance, cfg PodConfig) *corev1.Pod {
	labels := maps.Clone(vmi.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	delete(labels, v1.NodeNameLabel)
	labels[v1.AppLabel] = v1.LauncherApp
	labels[v1.CreatedByLabel] = string(vmi.UID)

	grace := v1.DefaultTerminationGracePeriodSeconds
	if vmi.Spec.TerminationGracePeriodSeconds != nil {
		grace = *vmi.Spec.TerminationGracePeriodSeconds
	}
	nodeSelector := maps.Clone(vmi.Spec.NodeSelector)
	if nodeSelector == nil {
		nodeSelector = map[string]string{}
	}
	nodeSelector[v1.SchedulableLabel] = "true"

	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    "virt-launcher-" + vmi.Name + "-",
			Namespace:       vmi.Namespace,
			Labels:          labels,
			Annotations:     map[string]string{"kubevirt.io/domain": vmi.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeSelector:                  nodeSelector,
			Affinity:                      vmi.Spec.Affinity.DeepCopy(),
			Tolerations:                   append([]corev1.Toleration(nil), vmi.Spec.Tolerations...),
			TerminationGracePeriodSeconds: ptr.To(grace + shutdownMargin),
			Hostname:                      vmi.Spec.Hostname,
			Subdomain:                     vmi.Spec.Subdomain,
			DNSPolicy:                     vmi.Spec.DNSPolicy,
			DNSConfig:                     vmi.Spec.DNSConfig.DeepCopy(),
			PriorityClassName:             vmi.Spec.PriorityClassName,
			SchedulerName:                 vmi.Spec.SchedulerName,
			TopologySpreadConstraints:     topologySpread(vmi),
			// Every containerDisk's sidecar lends QEMU its image through /proc/<pid>/root.
			ShareProcessNamespace:        ptr.To(true),
			AutomountServiceAccountToken: ptr.To(false),
			ServiceAccountName:           serviceAccountName(vmi),
			ImagePullSecrets:             pullSecrets(vmi),
			SecurityContext:              podSecurityContext(),
			Volumes:                      podVolumes(vmi, cfg),
			InitContainers:               initContainers(vmi, cfg),
			Containers: []corev1.Container{{
				Name:            launcherContainer,
				Image:           cfg.LauncherImage,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            launcherArgs(vmi, grace),
				Env:             launcherEnv(vmi),
				Resources:       launcherResources(vmi, cfg),
				VolumeMounts:    computeMounts(vmi, cfg.BlockVolumes),
				VolumeDevices:   blockDevices(vmi, cfg.BlockVolumes),
				SecurityContext: containerSecurityContext(),
				ReadinessProbe:  guestProbe(vmi, vmi.Spec.ReadinessProbe),
				LivenessProbe:   guestProbe(vmi, vmi.Spec.LivenessProbe),
				// A launcher that fails before its domain runs says why in its last log lines.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
		},
	}
}

// launcherResources requests the guest's memory plus the overhead, and passes CPU requests and
// any limits through; an instance that sets no CPU requests its vCPUs over the allocation
// ratio, as KubeVirt's does, so a namespace whose ResourceQuota counts requests.cpu admits it.
// Without a memory limit set by the user, none is set: a limit too tight gets QEMU
// OOM-killed. The devices the guest needs are extended resources of virt-handler's device
// plugins (limits only: requests follow them).
func launcherResources(vmi *v1.VirtualMachineInstance, cfg PodConfig) corev1.ResourceRequirements {
	r := vmi.Spec.Domain.Resources
	out := corev1.ResourceRequirements{Requests: r.Requests.DeepCopy(), Limits: r.Limits.DeepCopy()}
	if out.Requests == nil {
		out.Requests = corev1.ResourceList{}
	}
	if out.Limits == nil {
		out.Limits = corev1.ResourceList{} // an empty one is left out of the pod's JSON
	}
	memory := guestMemory(vmi)
	if !r.OvercommitGuestOverhead {
		memory.Add(launcherOverhead(vmi))
	}
	if size, ok := hugepageSize(vmi); ok {
		// The guest's RAM comes from huge pages, so only the overhead is ordinary memory. A
		// node without pages of this size cannot take the pod: the scheduler says so in the
		// instance's PodScheduled condition.
		pages := corev1.ResourceName(corev1.ResourceHugePagesPrefix + size)
		out.Requests[pages], out.Limits[pages] = guestMemory(vmi), guestMemory(vmi)
		memory = launcherOverhead(vmi)
	}
	out.Requests[corev1.ResourceMemory] = memory
	_, cpuRequested := out.Requests[corev1.ResourceCPU]
	if _, cpuLimited := out.Limits[corev1.ResourceCPU]; !cpuRequested && !cpuLimited {
		// A limit alone is the request too (the API server's default).
		out.Requests[corev1.ResourceCPU] = vcpuRequest(vmi, cfg)
	}
	if _, set := out.Requests[corev1.ResourceEphemeralStorage]; !set {
		maps.Copy(out.Requests, ephemeralRequest())
	}
	if limit, ok := out.Limits[corev1.ResourceMemory]; ok && limit.Cmp(memory) < 0 {
		// A limit below guest memory plus overhead cannot hold the guest.
		out.Limits[corev1.ResourceMemory] = memory.DeepCopy()
	}
	autoLimits(&out, vmi, cfg.AutoLimits)
	var devices []corev1.ResourceName
	if !cfg.UseEmulation {
		devices = append(devices, layout.KVMResource)
	}
	if vmi.Spec.HasPodInterface() {
		devices = append(devices, layout.TunResource)
	}
	for _, name := range devices {
		out.Limits[name] = resource.MustParse("1")
		out.Requests[name] = resource.MustParse("1")
	}
	return out
}

// autoLimits gives compute the limits its namespace's quotas require and the instance does
// not set, as KubeVirt's AutoResourceLimits does: a CPU per vCPU (at least the request) and
// the ratio times the memory request. out.Limits is not nil.
func autoLimits(out *corev1.ResourceRequirements, vmi *v1.VirtualMachineInstance, want AutoLimits) {
	if _, set := out.Limits[corev1.ResourceCPU]; want.CPU && !set {
		limit := *resource.NewQuantity(boundedVCPUs(vmi), resource.DecimalSI)
		if request := out.Requests[corev1.ResourceCPU]; request.Cmp(limit) > 0 {
			limit = request.DeepCopy()
		}
		out.Limits[corev1.ResourceCPU] = limit
	}
	if _, set := out.Limits[corev1.ResourceMemory]; want.Memory && !set {
		request := out.Requests[corev1.ResourceMemory]
		ratio := max(want.MemoryRatio, 1)
		out.Limits[corev1.ResourceMemory] = *resource.NewQuantity(int64(float64(request.Value())*ratio), resource.BinarySI)
	}
}

// vcpuRequest is the CPU an instance's vCPUs request under the allocation ratio, at least 1m.
func vcpuRequest(vmi *v1.VirtualMachineInstance, cfg PodConfig) resource.Quantity {
	ratio := cfg.CPUAllocationRatio
	if ratio <= 0 {
		ratio = DefaultCPUAllocationRatio
	}
	milli := max(boundedVCPUs(vmi)*1000/ratio, 1)
	return *resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// boundedVCPUs is the instance's vCPU count, bounded: sockets × cores × threads may overflow.
func boundedVCPUs(vmi *v1.VirtualMachineInstance) int64 {
	return int64(min(vmi.Spec.Domain.VCPUs(), 1<<16))
}

// guestProbe is an instance's probe as the compute container's. httpGet and tcpSocket: the
// kubelet probes the pod IP, which the masquerade binding forwards to the guest, as in
// KubeVirt. guestAgentPing and exec go through the guest agent: an exec probe of
// `virt-launcher guest-probe` (launcher.GuestProbe), given the probe's timeout, which the
// kubelet's exceeds by a second so the probe ends first. A failed liveness probe ends the
// container, so the instance fails; readiness is the pod's, which virt-handler folds into
// the instance's Ready condition.
func guestProbe(vmi *v1.VirtualMachineInstance, p *v1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: p.HTTPGet.DeepCopy(), TCPSocket: p.TCPSocket.DeepCopy()},
		InitialDelaySeconds: p.InitialDelaySeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		PeriodSeconds:       p.PeriodSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	if p.GuestAgentPing == nil && p.Exec == nil {
		if p.HTTPGet == nil && p.TCPSocket == nil {
			return nil
		}
		return probe
	}
	timeout := max(p.TimeoutSeconds, 1)
	cmd := []string{"/usr/bin/virt-launcher", "guest-probe", "--domain", layout.DomainName(vmi.Namespace, vmi.Name),
		"--timeout", strconv.Itoa(int(timeout))}
	if p.Exec != nil {
		cmd = append(append(cmd, "--"), p.Exec.Command...)
	}
	probe.Exec, probe.TimeoutSeconds = &corev1.ExecAction{Command: cmd}, timeout+1
	return probe
}

// topologySpread copies the instance's spread constraints to its pod, whose labels are the
// instance's.
func topologySpread(vmi *v1.VirtualMachineInstance) []corev1.TopologySpreadConstraint {
	var out []corev1.TopologySpreadConstraint
	for _, c := range vmi.Spec.TopologySpreadConstraints {
		out = append(out, *c.DeepCopy())
	}
	return out
}

// hugepageSize is the huge page size backing the guest's memory, if any.
func hugepageSize(vmi *v1.VirtualMachineInstance) (string, bool) {
	m := vmi.Spec.Domain.Memory
	if m == nil || m.Hugepages == nil || m.Hugepages.PageSize == "" {
		return "", false
	}
	return m.Hugepages.PageSize, true
}

// guestMemory is the RAM the guest sees: memory.guest, else the memory request, else the limit.
func guestMemory(vmi *v1.VirtualMachineInstance) resource.Quantity {
	d := vmi.Spec.Domain
	switch {
	case d.Memory != nil && d.Memory.Guest != nil:
		return d.Memory.Guest.DeepCopy()
	case !d.Resources.Requests.Memory().IsZero():
		return d.Resources.Requests.Memory().DeepCopy()
	default:
		return d.Resources.Limits.Memory().DeepCopy()
	}
}
