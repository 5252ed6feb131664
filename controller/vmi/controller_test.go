package vmi

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

type fixture struct {
	t    *testing.T
	kube *kubefake.Clientset
	virt *fake.Clientset
	c    *Controller
	pods cache.Indexer
	vmis cache.Indexer
	pvcs cache.Indexer
}

func newFixture(t *testing.T, vmi *v1.VirtualMachineInstance, pods ...*corev1.Pod) *fixture {
	f := &fixture{t: t, kube: kubefake.NewSimpleClientset(), virt: fake.NewSimpleClientset(vmi)}
	for _, p := range pods {
		_ = f.kube.Tracker().Add(p)
	}
	virtInformers := informers.NewSharedInformerFactory(f.virt, 0)
	kubeInformers := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	c, err := New(f.kube, f.virt, virtInformers.Kubevirt().V1().VirtualMachineInstances(), kubeInformers.Core().V1().Pods(), kubeInformers.Core().V1().PersistentVolumeClaims(),
		record.NewFakeRecorder(10), PodConfig{LauncherImage: "launcher:test"}, Quotas{})
	if err != nil {
		t.Fatal(err)
	}
	_ = virtInformers.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Add(vmi)
	for _, p := range pods {
		_ = kubeInformers.Core().V1().Pods().Informer().GetIndexer().Add(p)
		c.created.set("ns/web", p.UID) // as if this controller had created it
	}
	f.c, f.pods = c, kubeInformers.Core().V1().Pods().Informer().GetIndexer()
	f.vmis = virtInformers.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer()
	f.pvcs = kubeInformers.Core().V1().PersistentVolumeClaims().Informer().GetIndexer()
	return f
}

// sync runs one sync and returns its writes, kube and virt together.
func (f *fixture) sync() string {
	f.t.Helper()
	f.kube.ClearActions()
	f.virt.ClearActions()
	if err := f.c.sync(context.Background(), "ns/web"); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	var out []string
	for _, a := range append(f.kube.Actions(), f.virt.Actions()...) {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		v := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		out = append(out, v)
	}
	return strings.Join(out, ", ")
}

func (f *fixture) stored() *v1.VirtualMachineInstance {
	vmi, err := f.virt.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return vmi
}

func newInstance() *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "vmi-uid", Finalizers: []string{v1.VirtualMachineInstanceFinalizer}},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
	}
}

func launcher(vmi *v1.VirtualMachineInstance, phase corev1.PodPhase, node string) *corev1.Pod {
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:test"})
	pod.Name, pod.UID = "virt-launcher-web-abcde", "pod-uid"
	pod.Spec.NodeName = node
	pod.Status.Phase = phase
	return pod
}

// A pod someone else made to claim the instance (its label and owner reference) is not its
// launcher: the controller creates its own, and never lists the claimant in activePods.
func TestAClaimingPodIsNotTheLauncher(t *testing.T) {
	vmi := newInstance()
	decoy := launcher(vmi, corev1.PodRunning, "node-a")
	decoy.Name, decoy.UID = "decoy", "decoy-uid"
	decoy.Spec.Containers[0].Command = []string{"/bin/sh", "-c", "steal the console"}
	f := newFixture(t, vmi)
	_ = f.kube.Tracker().Add(decoy)
	_ = f.pods.Add(decoy)
	if got, want := f.sync(), "create pods"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	if _, listed := f.stored().Status.ActivePods[decoy.UID]; listed {
		t.Errorf("activePods lists the claiming pod: %v", f.stored().Status.ActivePods)
	}
}

func TestSyncCreatesTheLauncherPod(t *testing.T) {
	f := newFixture(t, newInstance())
	// No status write yet: the scheduling hold waits for the pod to run.
	if got, want := f.sync(), "create pods"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	// The pod is not in the cache yet: no second pod.
	if got := f.sync(); strings.Contains(got, "create pods") {
		t.Errorf("second sync under informer lag: %s", got)
	}
}

func TestSchedulingHold(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		podPhase  corev1.PodPhase
		node      string
		podAge    time.Duration
		wantWrite string
		wantPhase v1.VirtualMachineInstancePhase
	}{
		{"pod waiting within the hold: no write", corev1.PodPending, "", time.Second, "", v1.VmPhaseUnset},
		{"pod waiting past the hold: Scheduling", corev1.PodPending, "", 3 * time.Second, "patch virtualmachineinstances", v1.Scheduling},
		{"pod running within the hold: Scheduled at once", corev1.PodRunning, "node-a", time.Second, "patch virtualmachineinstances", v1.Scheduled},
		{"pod bound, its containers starting: Scheduled at once", corev1.PodPending, "node-a", time.Second, "patch virtualmachineinstances", v1.Scheduled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newInstance()
			pod := launcher(vmi, tt.podPhase, tt.node)
			pod.CreationTimestamp = metav1.NewTime(now.Add(-tt.podAge))
			f := newFixture(t, vmi, pod)
			f.c.clock = testingclock.NewFakePassiveClock(now)
			if got := f.sync(); got != tt.wantWrite {
				t.Fatalf("actions: %q, want %q", got, tt.wantWrite)
			}
			if phase := f.stored().Status.Phase; phase != tt.wantPhase {
				t.Errorf("phase %q, want %q", phase, tt.wantPhase)
			}
		})
	}
}

func TestSyncRecordsTheNode(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Scheduling
	f := newFixture(t, vmi, launcher(vmi, corev1.PodRunning, "node-a"))
	// One write: the status is no subresource, so KubeVirt's label goes with the node.
	if got, want := f.sync(), "patch virtualmachineinstances"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	stored := f.stored()
	if stored.Status.Phase != v1.Scheduled || stored.Status.NodeName != "node-a" || stored.Labels[v1.NodeNameLabel] != "node-a" {
		t.Errorf("phase %s node %q label %q, want Scheduled on node-a", stored.Status.Phase, stored.Status.NodeName, stored.Labels[v1.NodeNameLabel])
	}
}

func TestLabelNodeFollowsTheStatus(t *testing.T) {
	tests := []struct {
		name, node, label string
		want              bool
	}{
		{"no node yet", "", "", false},
		{"scheduled", "node-a", "", true},
		{"already labelled", "node-a", "node-a", false},
		{"migrated", "node-b", "node-a", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.NodeName = tt.node
			if tt.label != "" {
				vmi.Labels = map[string]string{v1.NodeNameLabel: tt.label}
			}
			if got := labelNode(vmi); got != tt.want {
				t.Errorf("changed %v, want %v", got, tt.want)
			}
			if tt.node != "" && vmi.Labels[v1.NodeNameLabel] != tt.node {
				t.Errorf("label %q, want %q", vmi.Labels[v1.NodeNameLabel], tt.node)
			}
		})
	}
}

// The same write reports what the guest got, as KubeVirt's status does: the pod's QoS class,
// the CPU topology and the memory.
func TestSyncReportsTheGuestsResources(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Scheduling
	vmi.Spec.Domain.CPU = &v1.CPU{Cores: 2}
	vmi.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	pod := launcher(vmi, corev1.PodRunning, "node-a")
	pod.Status.QOSClass = corev1.PodQOSBurstable
	f := newFixture(t, vmi, pod)
	if got, want := f.sync(), "patch virtualmachineinstances"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	s := f.stored().Status
	want := resource.MustParse("256Mi")
	if s.QOSClass == nil || *s.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("qosClass %v, want Burstable", s.QOSClass)
	}
	if s.CurrentCPUTopology == nil || *s.CurrentCPUTopology != (v1.CPUTopology{Sockets: 1, Cores: 2, Threads: 1}) {
		t.Errorf("currentCPUTopology %+v, want 1 socket, 2 cores, 1 thread", s.CurrentCPUTopology)
	}
	if m := s.Memory; m == nil || m.GuestAtBoot.Cmp(want) != 0 || m.GuestCurrent.Cmp(want) != 0 || m.GuestRequested.Cmp(want) != 0 {
		t.Errorf("memory %+v, want 256Mi each", m)
	}
}

// A sync between the controller's status write and the watch event of it sees the instance as
// it was before: it writes nothing (it would be refused with a conflict); the watch event's
// sync writes what changed meanwhile.
func TestSyncWritesNoStatusFromACopyItsWriteReplaced(t *testing.T) {
	vmi := newInstance()
	vmi.ResourceVersion = "1"
	vmi.Status.Phase = v1.Scheduling
	pod := launcher(vmi, corev1.PodRunning, "node-a")
	f := newFixture(t, vmi, pod)
	if got, want := f.sync(), "patch virtualmachineinstances"; got != want {
		t.Fatalf("first sync: %s, want %s", got, want)
	}
	failed := pod.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	_ = f.pods.Update(failed)
	if got := f.sync(); got != "" {
		t.Errorf("sync from the replaced copy (resourceVersion 1) wrote: %s", got)
	}
	written := f.stored().DeepCopy()
	written.ResourceVersion = "2"
	_ = f.vmis.Update(written)
	if got, want := f.sync(), "patch virtualmachineinstances"; got != want {
		t.Errorf("sync once the cache has the written instance: %s, want %s", got, want)
	}
}

func TestSyncFailsAnInstanceWhosePodVanished(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Running
	f := newFixture(t, vmi)
	f.sync()
	if s := f.stored().Status; s.Phase != v1.Failed || s.Reason != "PodDeleted" {
		t.Errorf("phase %s reason %q, want Failed PodDeleted", s.Phase, s.Reason)
	}
}

func TestAFailedLauncherSaysWhyOnTheInstance(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Scheduled
	pod := launcher(vmi, corev1.PodFailed, "node-a")
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 1, Message: "masquerade network: virt-handler did not set up the pod network (bridge k6t-br0) within 4m0s\n"}}}}
	f := newFixture(t, vmi, pod)
	f.sync()
	s := f.stored().Status
	if s.Phase != v1.Failed || s.Reason != ReasonPodFailed {
		t.Errorf("phase %s reason %q, want Failed %s", s.Phase, s.Reason, ReasonPodFailed)
	}
	want := "virt-launcher: masquerade network: virt-handler did not set up the pod network (bridge k6t-br0) within 4m0s"
	if len(s.Conditions) != 1 || s.Conditions[0].Reason != ReasonPodFailed || s.Conditions[0].Message != want {
		t.Errorf("conditions %+v, want the launcher's message %q", s.Conditions, want)
	}
}

func TestDeletionWaitsForThePod(t *testing.T) {
	vmi := newInstance()
	vmi.DeletionTimestamp = ptr.To(metav1.Now())
	f := newFixture(t, vmi, launcher(vmi, corev1.PodRunning, "node-a"))
	if got, want := f.sync(), "delete pods"; got != want {
		t.Fatalf("with the pod still there: %s, want %s", got, want)
	}
	if !slices.Contains(f.stored().Finalizers, v1.VirtualMachineInstanceFinalizer) {
		t.Error("finalizer released while the pod may still run the guest")
	}

	f = newFixture(t, vmi)
	if got, want := f.sync(), "update virtualmachineinstances"; got != want {
		t.Fatalf("with the pod gone: %s, want %s", got, want)
	}
	if slices.Contains(f.stored().Finalizers, v1.VirtualMachineInstanceFinalizer) {
		t.Error("finalizer kept after the pod is gone")
	}
}

func TestPodScheduledIsMirroredOnlyWhileThePodWaits(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Scheduling
	pod := launcher(vmi, corev1.PodPending, "")
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}
	f := newFixture(t, vmi, pod)
	f.sync()
	if c := f.stored().Status.Condition(v1.VirtualMachineInstancePodScheduled); c == nil || c.Reason != corev1.PodReasonUnschedulable {
		t.Fatalf("condition %+v, want PodScheduled False Unschedulable", c)
	}

	scheduled := f.stored()
	pod.Spec.NodeName = "node-a"
	pod.Status.Conditions[0].Status = corev1.ConditionTrue
	f = newFixture(t, scheduled, pod)
	f.sync()
	if c := f.stored().Status.Condition(v1.VirtualMachineInstancePodScheduled); c != nil {
		t.Errorf("condition %+v after scheduling, want none", c)
	}
}

func TestAFailedPodCreationIsReportedOnTheInstance(t *testing.T) {
	f := newFixture(t, newInstance())
	f.kube.PrependReactor("create", "pods", func(core.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`pods "virt-launcher-web-" is forbidden: exceeded quota`)
	})
	if err := f.c.sync(context.Background(), "ns/web"); err == nil {
		t.Fatal("sync succeeded, want the create error returned for a retry")
	}
	conds := f.stored().Status.Conditions
	if len(conds) != 1 || conds[0].Type != v1.VirtualMachineInstanceSynchronized || conds[0].Reason != FailedCreate ||
		!strings.Contains(conds[0].Message, "exceeded quota") {
		t.Errorf("conditions %+v, want Synchronized False FailedCreate with the API error", conds)
	}
}
