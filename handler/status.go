package handler

import (
	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Reasons the handler gives in status.reason and on the Ready condition.
const (
	ReasonGuestShutdown      = "GuestShutdown"
	ReasonGuestCrashed       = "GuestCrashed"
	ReasonDomainDestroyed    = "DomainDestroyed"
	ReasonDomainStopped      = "DomainStopped"
	ReasonDomainLost         = "DomainLost"
	ReasonLauncherPodDeleted = "LauncherPodDeleted"
	ReasonInvalidSpec        = "InvalidSpec"
	ReasonPaused             = "Paused"
	ReasonSuspended          = "Suspended"
	ReasonSyncFailed         = "SyncFailed"
	ReasonStartFailed        = "StartFailed"
	ReasonMissingSecret      = "MissingSecret"
	ReasonMissingConfigMap   = "MissingConfigMap"
	// The launcher's libvirtd did not answer in time, or sent what libvirt never sends.
	ReasonLauncherUnresponsive  = "LauncherUnresponsive"
	ReasonLauncherProtocolError = "LauncherProtocolError"
)

// Reasons of the Paused condition, KubeVirt's: controller/vm shows such a VM as Paused, and
// virt-api's unpause accepts it.
const (
	ReasonPausedByUser  = "PausedByUser"
	ReasonPausedIOError = "PausedIOError"
)

var pausedMessages = map[string]string{
	ReasonPausedByUser:  "VMI was paused by user",
	ReasonPausedIOError: "VMI was paused, low-level IO error detected",
}

// outcome is what the handler reports of a domain.
type outcome struct {
	phase  v1.VirtualMachineInstancePhase
	reason string
	ready  bool
	// paused is the Paused condition's reason, "" for none: only pauses that last until
	// someone acts, not libvirt's own brief ones (a soft reboot, a start).
	paused string
}

// outcomeOf maps a domain's state and reason to the instance's phase; false for a state that
// says nothing (nostate). podDeleting: the launcher pod is being deleted while its instance is
// not, so a stop is a kill from outside, not the guest's choice.
func outcomeOf(st DomainStatus, podDeleting bool) (outcome, bool) {
	switch st.State {
	case libvirt.DomainRunning, libvirt.DomainBlocked, libvirt.DomainShutdown:
		// DomainShutdown is "shutting down": the guest still runs.
		return outcome{phase: v1.Running, ready: true}, true
	case libvirt.DomainPaused:
		// Still Running: a paused guest keeps its memory and resumes where it stopped.
		return outcome{phase: v1.Running, reason: ReasonPaused, paused: pausedBy(st.Reason)}, true
	case libvirt.DomainPmsuspended:
		return outcome{phase: v1.Running, reason: ReasonSuspended}, true
	case libvirt.DomainCrashed:
		return outcome{phase: v1.Failed, reason: ReasonGuestCrashed}, true
	case libvirt.DomainShutoff:
		reason := libvirt.DomainShutoffReason(st.Reason)
		switch {
		case reason == libvirt.DomainShutoffCrashed:
			return outcome{phase: v1.Failed, reason: ReasonGuestCrashed}, true
		case podDeleting && (reason == libvirt.DomainShutoffShutdown || reason == libvirt.DomainShutoffDestroyed):
			return outcome{phase: v1.Failed, reason: ReasonLauncherPodDeleted}, true
		case reason == libvirt.DomainShutoffShutdown:
			return outcome{phase: v1.Succeeded, reason: ReasonGuestShutdown}, true
		case reason == libvirt.DomainShutoffDestroyed:
			return outcome{phase: v1.Failed, reason: ReasonDomainDestroyed}, true
		default:
			return outcome{phase: v1.Failed, reason: ReasonDomainStopped}, true
		}
	}
	return outcome{}, false
}

// pausedBy is the Paused condition's reason for libvirt's reason of a paused state.
func pausedBy(reason int32) string {
	switch libvirt.DomainPausedReason(reason) {
	case libvirt.DomainPausedUser:
		return ReasonPausedByUser
	case libvirt.DomainPausedIoerror:
		return ReasonPausedIOError
	}
	return ""
}

// neverRan is a defined domain that did not run yet: libvirt leaves a new definition shut off
// for an unknown reason, and a start that failed shut off with reason failed. Every domain that
// ran has another reason, so starting these cannot start a guest twice.
func neverRan(st DomainStatus) bool {
	r := libvirt.DomainShutoffReason(st.Reason)
	return st.State == libvirt.DomainShutoff && (r == libvirt.DomainShutoffUnknown || r == libvirt.DomainShutoffFailed)
}

// applyOutcome writes o into the instance's status: the phase, the Ready and Paused
// conditions, and while it runs (dev: its devices), the interfaces, the volumes' targets, the
// machine type and the launcher image. Synchronized False (a failed start) is cleared once the
// domain ran.
func applyOutcome(vmi *v1.VirtualMachineInstance, o outcome, pod *corev1.Pod, dev *domainDevices, now metav1.Time) {
	s := &vmi.Status
	s.SetPhase(o.phase, o.reason, now)
	ready := v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}
	switch {
	case !o.ready:
		ready.Status, ready.Reason = corev1.ConditionFalse, o.reason
	case vmi.Spec.ReadinessProbe != nil && !podReady(pod):
		// The kubelet runs the guest's readiness probe as the compute container's.
		ready.Status, ready.Reason = corev1.ConditionFalse, ReasonGuestNotReady
	}
	s.SetCondition(ready, now)
	if o.paused != "" {
		s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue,
			Reason: o.paused, Message: pausedMessages[o.paused]}, now)
	} else {
		s.RemoveCondition(v1.VirtualMachineInstancePaused, "")
	}
	s.RemoveCondition(v1.VirtualMachineInstanceSynchronized, "")
	if o.phase != v1.Running {
		return
	}
	if dev == nil {
		dev = &domainDevices{} // nothing read of the domain: the spec's alone
	}
	s.Interfaces = interfaceStatus(vmi, pod, dev.macs)
	volumeTargets(vmi, dev.drives)
	if dev.machine != "" {
		s.Machine = &v1.Machine{Type: dev.machine}
	}
	if len(pod.Spec.Containers) > 0 {
		s.LauncherContainerImageVersion = pod.Spec.Containers[0].Image
	}
}

// ReasonGuestNotReady: the domain runs, its readiness probe does not pass (yet).
const ReasonGuestNotReady = "GuestNotReady"

func podReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// interfaceStatus lists the spec's interfaces with the pod's addresses (masquerade: the guest
// is reached through the pod IP) and the guest MAC, from the spec or as libvirt chose it.
func interfaceStatus(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, macs map[string]string) []v1.VirtualMachineInstanceNetworkInterface {
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	taps, _ := attachments(vmi)
	var out []v1.VirtualMachineInstanceNetworkInterface
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		mac := iface.MacAddress
		if m, ok := macs[taps[iface.Name]]; ok {
			mac = m
		}
		out = append(out, v1.VirtualMachineInstanceNetworkInterface{Name: iface.Name, IP: pod.Status.PodIP, IPs: ips, MAC: mac,
			InfoSource: v1.InfoSourceDomain})
	}
	return out
}

// setFailed ends the instance with reason, saying why in the Synchronized condition.
func setFailed(vmi *v1.VirtualMachineInstance, reason, message string, now metav1.Time) {
	s := &vmi.Status
	s.SetPhase(v1.Failed, reason, now)
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: corev1.ConditionFalse, Reason: reason}, now)
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
		Reason: reason, Message: message}, now)
}

// setSyncFailed reports a sync error that the handler retries.
func setSyncFailed(vmi *v1.VirtualMachineInstance, message string, now metav1.Time) {
	vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
		Reason: ReasonSyncFailed, Message: message}, now)
}
