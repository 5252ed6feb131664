package handler

import (
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestStatusFromDomainState(t *testing.T) {
	shutoff := func(r libvirt.DomainShutoffReason) int32 { return int32(r) }
	for _, tc := range []struct {
		name        string
		state       libvirt.DomainState
		reason      int32
		podDeleting bool
		missing     bool
		wantPhase   v1.VirtualMachineInstancePhase
		wantReason  string
		wantReady   corev1.ConditionStatus
	}{
		{"running", libvirt.DomainRunning, 1, false, false, v1.Running, "", corev1.ConditionTrue},
		{"blocked", libvirt.DomainBlocked, 0, false, false, v1.Running, "", corev1.ConditionTrue},
		{"shutting down", libvirt.DomainShutdown, 1, false, false, v1.Running, "", corev1.ConditionTrue},
		{"paused", libvirt.DomainPaused, 1, false, false, v1.Running, ReasonPaused, corev1.ConditionFalse},
		{"guest shutdown", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffShutdown), false, false, v1.Succeeded, ReasonGuestShutdown, corev1.ConditionFalse},
		{"crashed (shut off)", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffCrashed), false, false, v1.Failed, ReasonGuestCrashed, corev1.ConditionFalse},
		{"crashed (state)", libvirt.DomainCrashed, 1, false, false, v1.Failed, ReasonGuestCrashed, corev1.ConditionFalse},
		{"destroyed", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffDestroyed), false, false, v1.Failed, ReasonDomainDestroyed, corev1.ConditionFalse},
		{"shut down as its pod is deleted", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffShutdown), true, false, v1.Failed, ReasonLauncherPodDeleted, corev1.ConditionFalse},
		{"destroyed as its pod is deleted", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffDestroyed), true, false, v1.Failed, ReasonLauncherPodDeleted, corev1.ConditionFalse},
		{"shut off, unknown reason", libvirt.DomainShutoff, shutoff(libvirt.DomainShutoffUnknown), false, false, v1.Failed, ReasonDomainStopped, corev1.ConditionFalse},
		{"domain gone", 0, 0, false, true, v1.Failed, ReasonDomainLost, corev1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase = v1.Running
			pod := newPod(vmi)
			if tc.podDeleting {
				pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			}
			f := newFixture(t, vmi, pod)
			if !tc.missing {
				f.lv.set(domName, tc.state, tc.reason)
			}
			f.sync()
			got := f.stored()
			if got.Status.Phase != tc.wantPhase || got.Status.Reason != tc.wantReason {
				t.Errorf("phase, reason = %s, %q; want %s, %q", got.Status.Phase, got.Status.Reason, tc.wantPhase, tc.wantReason)
			}
			if c := condition(got, v1.VirtualMachineInstanceReady); c == nil || c.Status != tc.wantReady {
				t.Errorf("Ready = %+v, want %s", c, tc.wantReady)
			}
			if d, s := f.lv.counts(); d+s != 0 {
				t.Errorf("a Running instance's domain was defined or started")
			}
		})
	}
}

func TestNoStateWritesNothing(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Running
	f := newFixture(t, vmi, newPod(vmi))
	f.lv.set(domName, libvirt.DomainNostate, 0)
	if w := f.sync(); len(w) != 0 {
		t.Errorf("writes = %v", w)
	}
}

// TestPausedCondition: a domain paused by the user (or by an I/O error) is a Running instance
// with Paused True, KubeVirt's reasons; libvirt's own brief pauses (a soft reboot's) set none;
// a domain running again drops it.
func TestPausedCondition(t *testing.T) {
	paused := func(r libvirt.DomainPausedReason) int32 { return int32(r) }
	for _, tc := range []struct {
		name       string
		state      libvirt.DomainState
		reason     int32
		wasPaused  bool
		wantReason string // "" for no Paused condition
	}{
		{"paused by the user", libvirt.DomainPaused, paused(libvirt.DomainPausedUser), false, ReasonPausedByUser},
		{"paused by an I/O error", libvirt.DomainPaused, paused(libvirt.DomainPausedIoerror), false, ReasonPausedIOError},
		{"paused while rebooting", libvirt.DomainPaused, paused(libvirt.DomainPausedShuttingDown), false, ""},
		{"still paused", libvirt.DomainPaused, paused(libvirt.DomainPausedUser), true, ReasonPausedByUser},
		{"unpaused", libvirt.DomainRunning, int32(libvirt.DomainRunningUnpaused), true, ""},
		{"guest shut down while paused", libvirt.DomainShutoff, int32(libvirt.DomainShutoffShutdown), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase = v1.Running
			if tc.wasPaused {
				vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue, Reason: ReasonPausedByUser}}
			}
			f := newFixture(t, vmi, newPod(vmi))
			f.lv.set(domName, tc.state, tc.reason)
			f.sync()
			got := f.stored()
			c := condition(got, v1.VirtualMachineInstancePaused)
			switch {
			case tc.wantReason == "" && c != nil:
				t.Errorf("Paused = %+v, want none", c)
			case tc.wantReason != "" && (c == nil || c.Status != corev1.ConditionTrue || c.Reason != tc.wantReason || c.Message == ""):
				t.Errorf("Paused = %+v, want True with reason %s and a message", c, tc.wantReason)
			}
			if tc.state == libvirt.DomainPaused && got.Status.Phase != v1.Running {
				t.Errorf("a paused instance is %s, want Running", got.Status.Phase)
			}
		})
	}
}

// TestReadinessProbeFoldsIntoReady: with a readiness probe, a running guest is Ready only once
// the kubelet's probe of it (the compute container's) passes.
func TestReadinessProbeFoldsIntoReady(t *testing.T) {
	for _, tc := range []struct {
		name      string
		probe     bool
		podReady  corev1.ConditionStatus
		wantReady corev1.ConditionStatus
	}{
		{"no probe", false, corev1.ConditionFalse, corev1.ConditionTrue},
		{"probe not passing", true, corev1.ConditionFalse, corev1.ConditionFalse},
		{"probe passing", true, corev1.ConditionTrue, corev1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase = v1.Running
			if tc.probe {
				vmi.Spec.ReadinessProbe = &v1.Probe{Handler: v1.Handler{TCPSocket: &corev1.TCPSocketAction{}}}
			}
			pod := newPod(vmi)
			pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: tc.podReady})
			f := newFixture(t, vmi, pod)
			f.lv.set(domName, libvirt.DomainRunning, int32(libvirt.DomainRunningBooted))
			f.sync()
			c := condition(f.stored(), v1.VirtualMachineInstanceReady)
			if c == nil || c.Status != tc.wantReady || (tc.wantReady == corev1.ConditionFalse && c.Reason != ReasonGuestNotReady) {
				t.Errorf("Ready = %+v, want %s", c, tc.wantReady)
			}
		})
	}
}
