package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// An instance whose claim does not exist gets no launcher pod: it stays Pending, says which
// claim it waits for (once, not on every sync), and starts when the claim is created.
func TestAnInstanceWaitsForItsClaim(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}}
	f := newFixture(t, vmi)
	events := f.c.recorder.(*record.FakeRecorder).Events
	const want = "PVC ns/late does not exist, waiting for it to appear"

	if got := f.sync(); got != "patch virtualmachineinstances" {
		t.Fatalf("actions: %q, want only the status write", got)
	}
	waiting := f.stored()
	if waiting.Status.Phase != v1.Pending {
		t.Errorf("phase %s, want Pending", waiting.Status.Phase)
	}
	for _, ct := range []v1.VirtualMachineInstanceConditionType{v1.VirtualMachineInstanceSynchronized, v1.VirtualMachineInstancePodScheduled} {
		if c := waiting.Status.Condition(ct); c == nil || c.Status != corev1.ConditionFalse || c.Message != want {
			t.Errorf("condition %s: %+v, want False saying %q", ct, c, want)
		}
	}
	if got := <-events; got != "Normal FailedPvcNotFound "+want {
		t.Errorf("event %q", got)
	}

	_ = f.vmis.Update(waiting)
	if got := f.sync(); got != "" {
		t.Errorf("a second sync wrote %q; want nothing", got)
	}
	if len(events) > 0 {
		t.Errorf("a second sync recorded %q", <-events)
	}

	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late"},
		Spec:   corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		Status: corev1.PersistentVolumeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}
	_ = f.pvcs.Add(pvc)
	f.c.enqueueClaimants(pvc)
	if key, _ := f.c.queue.Get(); key != "ns/web" {
		t.Fatalf("the claim's creation queued %q, want ns/web", key)
	}
	if got := f.sync(); got != "create pods" {
		t.Fatalf("actions once the claim exists: %q, want the pod created", got)
	}
	pod := launcher(vmi, corev1.PodPending, "node-a")
	pod.Name, pod.UID = launcherPodName(vmi), "pod-uid"
	_ = f.pods.Add(pod)
	f.c.expectations.CreationObserved("ns/web")
	if got := f.sync(); got != "patch virtualmachineinstances" {
		t.Fatalf("actions once the pod is bound: %q", got)
	}
	if s := f.stored().Status; s.Phase != v1.Scheduled || len(s.Conditions) != 1 || s.Conditions[0].Type != v1.VirtualMachineInstanceIsMigratable {
		t.Errorf("status once the pod is bound: %s %+v, want Scheduled with only LiveMigratable", s.Phase, s.Conditions)
	}
	// The claim as the volume's status says it, and the launcher's user: KubeVirt's fields,
	// in the same write.
	wantVolumes := []v1.VolumeStatus{{Name: "data", PersistentVolumeClaimInfo: &v1.PersistentVolumeClaimInfo{ClaimName: "late",
		AccessModes: pvc.Spec.AccessModes, Capacity: pvc.Status.Capacity}}}
	if s := f.stored().Status; !equality.Semantic.DeepEqual(s.VolumeStatus, wantVolumes) || s.RuntimeUser != layout.LauncherUID {
		t.Errorf("volumeStatus %+v, runtimeUser %d; want %+v, %d", s.VolumeStatus, s.RuntimeUser, wantVolumes, layout.LauncherUID)
	}
}

// A hook sidecar's claim is waited for as a volume's is.
func TestAnInstanceWaitsForItsSidecarsClaim(t *testing.T) {
	vmi := newInstance()
	vmi.Annotations = map[string]string{hooks.SidecarsAnnotation: `[{"image": "hook:1", "pvc": {"name": "tools", "volumePath": "/tools"}}]`}
	f := newFixture(t, vmi)
	if got := f.sync(); got != "patch virtualmachineinstances" {
		t.Fatalf("actions: %q, want only the status write", got)
	}
	const want = "PVC ns/tools does not exist, waiting for it to appear"
	if c := f.stored().Status.Condition(v1.VirtualMachineInstanceSynchronized); c == nil || c.Message != want {
		t.Errorf("Synchronized %+v, want %q", c, want)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tools"}}
	_ = f.pvcs.Add(pvc)
	f.c.enqueueClaimants(pvc)
	if key, _ := f.c.queue.Get(); key != "ns/web" {
		t.Fatalf("the claim's creation queued %q, want ns/web", key)
	}
	if got := f.sync(); got != "create pods" {
		t.Fatalf("actions once the claim exists: %q, want the pod created", got)
	}
}

// A claim's instances are synced again when what their volume status says of it changes (it
// was bound, or resized), not on its other updates.
func TestAClaimsChangeQueuesItsInstances(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	f := newFixture(t, vmi)
	pending := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"}}
	relabeled := pending.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	bound := pending.DeepCopy()
	bound.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	for _, tc := range []struct {
		name          string
		before, after *corev1.PersistentVolumeClaim
		queued        int
	}{
		{"labels", pending, relabeled, 0},
		{"bound", pending, bound, 1},
	} {
		f.c.claimChanged(tc.before, tc.after)
		if got := f.c.queue.Len(); got != tc.queued {
			t.Errorf("%s: %d keys queued, want %d", tc.name, got, tc.queued)
		}
	}
}
