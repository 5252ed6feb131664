package vm

import (
	"context"
	"strings"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

// fixture is a controller over fake clients whose informer caches are filled by hand, so a
// test states exactly what the controller sees and checks exactly what it writes.
type fixture struct {
	t           *testing.T
	client      *fake.Clientset
	kube        *kubefake.Clientset
	recorder    *record.FakeRecorder
	c           *Controller
	factory     informers.SharedInformerFactory
	kubeFactory kubeinformers.SharedInformerFactory
}

func newFixture(t *testing.T, vms []*v1.VirtualMachine, vmis []*v1.VirtualMachineInstance) *fixture {
	var objects []runtime.Object
	for _, vm := range vms {
		objects = append(objects, vm)
	}
	for _, vmi := range vmis {
		objects = append(objects, vmi)
	}
	f := &fixture{t: t, client: fake.NewSimpleClientset(objects...), kube: kubefake.NewSimpleClientset(), recorder: record.NewFakeRecorder(10)}
	f.factory = informers.NewSharedInformerFactory(f.client, 0)
	f.kubeFactory = kubeinformers.NewSharedInformerFactory(f.kube, 0)
	it := f.factory.Instancetype().V1beta1()
	types := Instancetypes{
		Instancetypes: it.VirtualMachineInstancetypes(), ClusterInstancetypes: it.VirtualMachineClusterInstancetypes(),
		Preferences: it.VirtualMachinePreferences(), ClusterPreferences: it.VirtualMachineClusterPreferences(),
		Revisions: f.kubeFactory.Apps().V1().ControllerRevisions(),
	}
	c, err := New(f.client, f.kube, f.factory.Kubevirt().V1().VirtualMachines(), f.factory.Kubevirt().V1().VirtualMachineInstances(),
		f.kubeFactory.Core().V1().Pods(), types, f.recorder)
	if err != nil {
		t.Fatal(err)
	}
	c.jitter = noJitter
	for _, vm := range vms {
		_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Add(vm)
	}
	for _, vmi := range vmis {
		_ = f.factory.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Add(vmi)
	}
	f.c = c
	return f
}

// sync runs one sync of the VM and returns the write actions it made.
func (f *fixture) sync(key string) []core.Action {
	f.t.Helper()
	f.client.ClearActions()
	if err := f.c.sync(context.Background(), key); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	var writes []core.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes
}

func verbs(actions []core.Action) string {
	var out []string
	for _, a := range actions {
		v := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			v += "/" + sub
		}
		out = append(out, v)
	}
	return strings.Join(out, ", ")
}

func newVM(strategy v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vm-uid", Generation: 1},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(strategy),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
					Resources: v1.ResourceRequirements{Requests: k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("64Mi")}},
					Firmware:  &v1.Firmware{UUID: "fixed-uuid"},
				}},
			},
		},
	}
}

func ownedInstance(vm *v1.VirtualMachine, phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
	vmi := renderInstance(vm, vm.Spec.Template, nil)
	vmi.UID = currentUID
	vmi.Status.Phase = phase
	return vmi
}

func TestSyncCreatesTheInstance(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	f := newFixture(t, []*v1.VirtualMachine{vm}, nil)
	if got, want := verbs(f.sync("ns/vm")), "create virtualmachineinstances, update virtualmachines/status"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	vmi, err := f.client.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(vmi); ref == nil || ref.UID != vm.UID || !*ref.BlockOwnerDeletion {
		t.Errorf("owner reference %+v, want controller %s blocking deletion", ref, vm.UID)
	}
	if vmi.Labels["app"] != "web" || vmi.Spec.Domain.Firmware.UUID != "fixed-uuid" {
		t.Errorf("instance does not carry the template: labels %v uuid %q", vmi.Labels, vmi.Spec.Domain.Firmware.UUID)
	}
	if e := <-f.recorder.Events; !strings.Contains(e, SuccessfulCreate) {
		t.Errorf("event %q, want %s", e, SuccessfulCreate)
	}
	status, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	if status.Status.PrintableStatus != v1.VirtualMachineStatusStarting || !status.Status.Created {
		t.Errorf("printable status %s created %v, want Starting and created", status.Status.PrintableStatus, status.Status.Created)
	}

	// The informer has not seen the new instance yet: a second sync must not create again.
	if got := verbs(f.sync("ns/vm")); strings.Contains(got, "create") {
		t.Errorf("second sync under informer lag: %s", got)
	}

	// Once the informers catch up, the status written at creation is already right.
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(status)
	_ = f.factory.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Add(vmi)
	f.c.expectations.CreationObserved("ns/vm")
	if got := verbs(f.sync("ns/vm")); got != "" {
		t.Errorf("sync after the informers caught up wrote: %s", got)
	}
}

func TestSyncPersistsAFirmwareUUIDAtFirstStart(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Firmware = nil
	f := newFixture(t, []*v1.VirtualMachine{vm}, nil)
	if got, want := verbs(f.sync("ns/vm")), "update virtualmachines, create virtualmachineinstances, update virtualmachines/status"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	vmi, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	uuid := stored.Spec.Template.Spec.Domain.Firmware.UUID
	if uuid == "" || vmi.Spec.Domain.Firmware.UUID != uuid {
		t.Errorf("VM UUID %q, instance UUID %q: want the same, non-empty", uuid, vmi.Spec.Domain.Firmware.UUID)
	}
}

func TestSyncStopsAHaltedVM(t *testing.T) {
	vm := newVM(v1.RunStrategyHalted)
	f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{ownedInstance(vm, v1.Running)})
	if got, want := verbs(f.sync("ns/vm")), "delete virtualmachineinstances, update virtualmachines/status"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	if f.c.expectations.Satisfied("ns/vm") {
		t.Error("the deletion is not recorded as expected")
	}
	// Stopping at once, though the informer still shows the instance running.
	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	if stored.Status.PrintableStatus != v1.VirtualMachineStatusStopping {
		t.Errorf("printable status %s right after the instance's deletion, want Stopping", stored.Status.PrintableStatus)
	}
}

func TestSyncAdoptsAnOrphanedInstance(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	orphan := ownedInstance(vm, v1.Running)
	orphan.OwnerReferences = nil
	f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{orphan})
	got := verbs(f.sync("ns/vm"))
	if !strings.HasPrefix(got, "patch virtualmachineinstances") || strings.Contains(got, "create") {
		t.Fatalf("actions: %s, want an adoption patch and no create", got)
	}
}

func TestSyncReportsProblemsWithoutActing(t *testing.T) {
	foreign := ownedInstance(newVM(v1.RunStrategyAlways), v1.Running)
	foreign.OwnerReferences[0].UID = "someone-else"
	noSource := newVM(v1.RunStrategyAlways)
	noSource.Spec.Template.Spec.Volumes = []v1.Volume{{Name: "disk"}}
	both := newVM(v1.RunStrategyAlways)
	both.Spec.Running = ptr.To(true)

	tests := []struct {
		name    string
		vm      *v1.VirtualMachine
		vmis    []*v1.VirtualMachineInstance
		message string
	}{
		{"instance controlled by another owner", newVM(v1.RunStrategyAlways), []*v1.VirtualMachineInstance{foreign}, "is controlled by"},
		{"template that cannot run", noSource, nil, "must set exactly one volume source"},
		{"running and runStrategy", both, nil, "mutually exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []*v1.VirtualMachine{tt.vm}, tt.vmis)
			if got := verbs(f.sync("ns/vm")); got != "update virtualmachines/status" {
				t.Fatalf("actions: %s, want only a status update", got)
			}
			stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
			var failure *v1.VirtualMachineCondition
			for i := range stored.Status.Conditions {
				if stored.Status.Conditions[i].Type == v1.VirtualMachineFailure {
					failure = &stored.Status.Conditions[i]
				}
			}
			if failure == nil || failure.Status != k8sv1.ConditionTrue || !strings.Contains(failure.Message, tt.message) {
				t.Errorf("Failure condition %+v, want True saying %q", failure, tt.message)
			}
		})
	}
}

func TestSyncWritesNoStatusWhenNothingChanged(t *testing.T) {
	vm := newVM(v1.RunStrategyHalted)
	f := newFixture(t, []*v1.VirtualMachine{vm}, nil)
	f.sync("ns/vm")
	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(stored)
	if got := verbs(f.sync("ns/vm")); got != "" {
		t.Errorf("second sync of an unchanged VM wrote: %s", got)
	}
}

func TestStoppingAFinishedInstanceIsNotStarting(t *testing.T) {
	vm := newVM(v1.RunStrategyHalted)
	f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{ownedInstance(vm, v1.Succeeded)})
	if got := verbs(f.sync("ns/vm")); !strings.HasPrefix(got, "delete virtualmachineinstances") {
		t.Fatalf("actions: %s, want the finished instance deleted", got)
	}
	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	if stored.Status.PrintableStatus != v1.VirtualMachineStatusStopped {
		t.Errorf("printable status %s while its finished instance is deleted, want Stopped", stored.Status.PrintableStatus)
	}
}

func TestAnInstanceBeingDeletedIsNotReady(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	vmi := ownedInstance(vm, v1.Running)
	vmi.DeletionTimestamp = ptr.To(metav1.Now())
	vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: k8sv1.ConditionTrue}}
	f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{vmi})
	f.sync("ns/vm")
	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	if stored.Status.Ready || stored.Status.PrintableStatus != v1.VirtualMachineStatusStopping {
		t.Errorf("ready %v printable %s, want not ready and Stopping", stored.Status.Ready, stored.Status.PrintableStatus)
	}
}

// A sync between the controller's status write and the watch event of it sees the VM as it
// was before the write: it writes nothing (the API server would refuse it with a conflict),
// and the sync the watch event brings writes what changed meanwhile.
func TestSyncWritesNoStatusFromACopyItsWriteReplaced(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	vm.ResourceVersion = "1"
	vmi := ownedInstance(vm, v1.Scheduled)
	f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{vmi})
	if got := verbs(f.sync("ns/vm")); got != "update virtualmachines/status" {
		t.Fatalf("first sync: %s, want the status written", got)
	}

	running := vmi.DeepCopy()
	running.Status.Phase = v1.Running
	running.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: k8sv1.ConditionTrue}}
	_ = f.factory.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Update(running)
	if got := verbs(f.sync("ns/vm")); got != "" {
		t.Errorf("sync from the replaced copy (resourceVersion 1) wrote: %s", got)
	}

	stored, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	stored = stored.DeepCopy()
	stored.ResourceVersion = "2"
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(stored)
	if got := verbs(f.sync("ns/vm")); got != "update virtualmachines/status" {
		t.Errorf("sync once the cache has the written VM: %s, want the status written", got)
	}
}
