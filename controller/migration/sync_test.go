package migration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	virtinformers "github.com/vmctl/vmctl/client/informers/externalversions"
)

// A sync between the hand-over's write of the instance's migrationState and the watch event of
// it sees the migration at PreparingTarget but the instance without the state. It must wait
// for the event, not fail the migration for an instance that "no longer names" it.
func TestSyncWaitsForTheCacheToShowItsHandOver(t *testing.T) {
	now := metav1.Now()
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid", ResourceVersion: "1"}}
	vmi.Status.Phase, vmi.Status.NodeName = v1.Running, "node1"
	vmi.Status.ActivePods = map[types.UID]string{"source-uid": "node1"}
	launcher := func(name string, uid types.UID, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, CreationTimestamp: now,
			Labels: map[string]string{v1.CreatedByLabel: "vmi-uid"}, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}}}
		p.Spec.NodeName, p.Status.Phase = node, corev1.PodRunning
		return p
	}
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: "ns", UID: "m1", ResourceVersion: "1",
		Finalizers: []string{v1.MigrationFinalizer}}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "vm"}}
	m.Status.Phase = v1.MigrationScheduled
	m.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{{Phase: v1.MigrationScheduling, PhaseTransitionTimestamp: now}}
	target := launcher("target", "target-uid", "node2")
	target.Labels[v1.MigrationJobLabel], target.Annotations[v1.MigrationJobNameAnnotation] = "m1", "move"

	virt, kube := fake.NewSimpleClientset(vmi, m), kubefake.NewSimpleClientset()
	virtFactory, kubeFactory := virtinformers.NewSharedInformerFactory(virt, 0), kubeinformers.NewSharedInformerFactory(kube, 0)
	inf := Informers{Migrations: virtFactory.Kubevirt().V1().VirtualMachineInstanceMigrations(), VMIs: virtFactory.Kubevirt().V1().VirtualMachineInstances(),
		Pods: kubeFactory.Core().V1().Pods(), Policies: virtFactory.Migrations().V1alpha1().MigrationPolicies(), Namespaces: kubeFactory.Core().V1().Namespaces()}
	c, err := New(kube, virt, inf, record.NewFakeRecorder(10), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cache := func(informer interface{ GetIndexer() toolscache.Indexer }, obj any) {
		_ = informer.GetIndexer().Update(obj)
	}
	cache(inf.VMIs.Informer(), vmi)
	cache(inf.Migrations.Informer(), m)
	cache(inf.Pods.Informer(), launcher("source", "source-uid", "node1"))
	cache(inf.Pods.Informer(), target)
	stored := func() *v1.VirtualMachineInstanceMigration {
		got, _ := virt.KubevirtV1().VirtualMachineInstanceMigrations("ns").Get(context.Background(), "move", metav1.GetOptions{})
		return got.DeepCopy()
	}

	if err := c.sync(context.Background(), "ns/move"); err != nil {
		t.Fatal(err)
	}
	if got := stored().Status.Phase; got != v1.MigrationPreparingTarget {
		t.Fatalf("after the hand-over: phase %s, want PreparingTarget", got)
	}
	m = stored()
	m.ResourceVersion = "2"
	cache(inf.Migrations.Informer(), m) // the migration's event comes first; the instance's cache lags
	if err := c.sync(context.Background(), "ns/move"); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got.Status.Phase != v1.MigrationPreparingTarget {
		t.Fatalf("sync from the instance the hand-over replaced: phase %s (%+v), want PreparingTarget", got.Status.Phase, got.Status.MigrationState)
	}

	handedOver, _ := virt.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	handedOver = handedOver.DeepCopy()
	handedOver.ResourceVersion = "2"
	cache(inf.VMIs.Informer(), handedOver)
	if err := c.sync(context.Background(), "ns/move"); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got.Status.Phase != v1.MigrationPreparingTarget || got.Status.MigrationState.TargetNode != "node2" {
		t.Errorf("once the cache shows the hand-over: phase %s, target node %q; want PreparingTarget on node2",
			got.Status.Phase, got.Status.MigrationState.TargetNode)
	}
}
