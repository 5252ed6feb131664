package vm

import (
	"context"
	"strings"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func clusterType(name, memory string, generation int64) *itv1beta1.VirtualMachineClusterInstancetype {
	return &itv1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: generation},
		Spec: itv1beta1.VirtualMachineInstancetypeSpec{
			CPU: itv1beta1.CPUInstancetype{Guest: 2}, Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse(memory)},
		},
	}
}

// typedVM runs with the cluster instance type name and the cluster preference "pref", and a
// template without CPU or memory.
func typedVM(name string) *v1.VirtualMachine {
	vm := newVM(v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Resources = v1.ResourceRequirements{}
	vm.Spec.Template.Spec.Volumes = []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "img"}}}}
	vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: name}
	vm.Spec.Preference = &v1.PreferenceMatcher{Name: "pref"}
	return vm
}

func (f *fixture) addClusterTypes(objs ...*itv1beta1.VirtualMachineClusterInstancetype) {
	inf := f.factory.Instancetype().V1beta1().VirtualMachineClusterInstancetypes().Informer()
	for _, o := range objs {
		if err := inf.GetIndexer().Update(o); err != nil {
			f.t.Fatal(err)
		}
	}
	pref := &itv1beta1.VirtualMachineClusterPreference{
		ObjectMeta: metav1.ObjectMeta{Name: "pref", UID: "pref-uid", Generation: 1},
		Spec: itv1beta1.VirtualMachinePreferenceSpec{
			CPU:     &itv1beta1.CPUPreferences{PreferredCPUTopology: ptr.To(itv1beta1.Cores)},
			Devices: &itv1beta1.DevicePreferences{PreferredDiskBus: v1.DiskBusSCSI, PreferredInterfaceModel: "e1000"},
		},
	}
	_ = f.factory.Instancetype().V1beta1().VirtualMachineClusterPreferences().Informer().GetIndexer().Update(pref)
}

// stored is the VM and its instance as the fake API server holds them.
func (f *fixture) stored() (*v1.VirtualMachine, *v1.VirtualMachineInstance) {
	vm, _ := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	vmi, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "vm", metav1.GetOptions{})
	return vm, vmi
}

// restart forgets the instance (as if it had been stopped) and lets the informers see the
// stored VM, so the next sync starts it again.
func (f *fixture) restart() {
	vm, vmi := f.stored()
	_ = f.client.KubevirtV1().VirtualMachineInstances("ns").Delete(context.Background(), vmi.Name, metav1.DeleteOptions{})
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(vm)
	f.c.expectations.CreationObserved("ns/vm")
}

func TestAnInstancetypeIsExpandedAndPinned(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachine{typedVM("u1.small")}, nil)
	f.addClusterTypes(clusterType("u1.small", "2Gi", 1))
	f.sync("ns/vm")

	vm, vmi := f.stored()
	if vmi == nil || vmi.Name != "vm" {
		t.Fatalf("no instance created; events: %v", drain(f))
	}
	cpu, mem := vmi.Spec.Domain.CPU, vmi.Spec.Domain.Memory
	if cpu.Sockets != 1 || cpu.Cores != 2 || cpu.Threads != 1 || mem.Guest.String() != "2Gi" {
		t.Errorf("cpu %+v memory %s, want 2 cores (preferred) and 2Gi", cpu, mem.Guest)
	}
	if bus := vmi.Spec.Domain.Devices.Disks[0].Disk.Bus; bus != v1.DiskBusSCSI {
		t.Errorf("disk bus %s, want the preferred scsi", bus)
	}
	if ifaces := vmi.Spec.Domain.Devices.Interfaces; len(ifaces) != 1 || ifaces[0].Model != "e1000" {
		t.Errorf("interfaces %+v, want the defaulted pod interface with the preferred model", ifaces)
	}
	if vmi.Annotations[ClusterInstancetypeAnnotation] != "u1.small" || vmi.Annotations[ClusterPreferenceAnnotation] != "pref" {
		t.Errorf("annotations %v", vmi.Annotations)
	}
	ref := vm.Status.InstancetypeRef
	want := "vm-u1.small-v1beta1-uid-u1.small-1"
	if ref == nil || ref.Kind != v1.ClusterInstancetypeKind || ref.ControllerRevisionRef == nil || ref.ControllerRevisionRef.Name != want {
		t.Fatalf("status.instancetypeRef %+v, want revision %s", ref, want)
	}
	if vm.Status.PreferenceRef == nil || vm.Status.PreferenceRef.ControllerRevisionRef == nil {
		t.Errorf("status.preferenceRef %+v, want a revision", vm.Status.PreferenceRef)
	}
	if _, err := f.kube.AppsV1().ControllerRevisions("ns").Get(context.Background(), want, metav1.GetOptions{}); err != nil {
		t.Errorf("revision %s: %v", want, err)
	}

	// The instance type grows; the VM, pinned, restarts with the copy it took.
	f.addClusterTypes(clusterType("u1.small", "4Gi", 2))
	f.restart()
	f.sync("ns/vm")
	if _, vmi := f.stored(); vmi == nil || vmi.Spec.Domain.Memory.Guest.String() != "2Gi" {
		t.Fatalf("restarted instance %+v, want the pinned 2Gi", vmi)
	}

	// Another instance type: a new copy, of the current generation.
	vm, _ = f.stored()
	vm.Spec.Instancetype.Name = "u1.medium"
	_, _ = f.client.KubevirtV1().VirtualMachines("ns").Update(context.Background(), vm, metav1.UpdateOptions{})
	f.addClusterTypes(clusterType("u1.medium", "8Gi", 5))
	f.restart()
	f.sync("ns/vm")
	vm, vmi = f.stored()
	if vmi.Spec.Domain.Memory.Guest.String() != "8Gi" || vm.Status.InstancetypeRef.ControllerRevisionRef.Name != "vm-u1.medium-v1beta1-uid-u1.medium-5" {
		t.Errorf("after switching: memory %s, ref %+v", vmi.Spec.Domain.Memory.Guest, vm.Status.InstancetypeRef)
	}
}

func TestARevisionNamedInTheSpecIsUsed(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachine{typedVM("u1.small")}, nil)
	f.addClusterTypes(clusterType("u1.small", "2Gi", 1))
	f.sync("ns/vm") // pins generation 1
	first, _ := f.stored()
	pinned := first.Status.InstancetypeRef.ControllerRevisionRef.Name

	// A second VM names the first one's revision in its spec: that copy, not the current type.
	f.addClusterTypes(clusterType("u1.small", "4Gi", 2))
	vm := typedVM("u1.small")
	vm.Spec.Instancetype.RevisionName = pinned
	f.restart()
	_, _ = f.client.KubevirtV1().VirtualMachines("ns").Update(context.Background(), vm, metav1.UpdateOptions{})
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(vm)
	f.sync("ns/vm")
	stored, vmi := f.stored()
	if vmi == nil || vmi.Spec.Domain.Memory.Guest.String() != "2Gi" || stored.Status.InstancetypeRef.ControllerRevisionRef.Name != pinned {
		t.Errorf("instance %+v, ref %+v: want the spec's revision %s", vmi, stored.Status.InstancetypeRef, pinned)
	}
}

func TestAMissingInstancetypeWaits(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachine{typedVM("u1.nope")}, nil)
	f.addClusterTypes() // the preference only
	if got := verbs(f.sync("ns/vm")); got != "update virtualmachines/status" {
		t.Fatalf("actions: %s, want only the status", got)
	}
	vm, _ := f.stored()
	var failure *v1.VirtualMachineCondition
	for i := range vm.Status.Conditions {
		if vm.Status.Conditions[i].Type == v1.VirtualMachineFailure {
			failure = &vm.Status.Conditions[i]
		}
	}
	if failure == nil || !strings.Contains(failure.Message, `VirtualMachineClusterInstancetype "u1.nope"`) {
		t.Fatalf("failure condition %+v, want one naming the instance type", failure)
	}
	// The instance type appears: the waiting VM, and only it, is enqueued.
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Update(vm)
	other := typedVM("u1.small")
	other.Name = "other"
	_ = f.factory.Kubevirt().V1().VirtualMachines().Informer().GetIndexer().Add(other)
	for f.c.queue.Len() > 0 {
		k, _ := f.c.queue.Get()
		f.c.queue.Done(k)
	}
	f.c.enqueueWaiting(v1.ClusterInstancetypeKind, clusterType("u1.nope", "1Gi", 1))
	if n := f.c.queue.Len(); n != 1 {
		t.Fatalf("%d keys enqueued, want the one VM waiting for u1.nope", n)
	}
	if k, _ := f.c.queue.Get(); k != "ns/vm" {
		t.Errorf("enqueued %s", k)
	}
}

func TestATemplateConflictingWithItsInstancetypeDoesNotStart(t *testing.T) {
	vm := typedVM("u1.small")
	vm.Spec.Template.Spec.Domain.Resources.Requests = k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("1Gi")}
	f := newFixture(t, []*v1.VirtualMachine{vm}, nil)
	f.addClusterTypes(clusterType("u1.small", "2Gi", 1))
	if got := verbs(f.sync("ns/vm")); strings.Contains(got, "create") {
		t.Fatalf("actions: %s, want no instance", got)
	}
	stored, _ := f.stored()
	if c := stored.Status.Conditions; len(c) < 2 || !strings.Contains(c[len(c)-1].Message, "spec.template.spec.domain.resources.requests.memory") {
		t.Errorf("conditions %+v, want a failure naming the conflicting field", c)
	}
}

func drain(f *fixture) []string {
	var out []string
	for len(f.recorder.Events) > 0 {
		out = append(out, <-f.recorder.Events)
	}
	return out
}

func TestVMsAreIndexedByWhatTheyWaitFor(t *testing.T) {
	ref := func(name, kind string) *v1.InstancetypeStatusRef {
		return &v1.InstancetypeStatusRef{Name: name, Kind: kind, ControllerRevisionRef: &v1.ControllerRevisionRef{Name: "rev"}}
	}
	tests := []struct {
		name    string
		matcher v1.InstancetypeMatcher
		status  *v1.InstancetypeStatusRef
		want    string // "" for none
	}{
		{"not pinned yet", v1.InstancetypeMatcher{Name: "u1.small"}, nil, v1.ClusterInstancetypeKind + "//u1.small"},
		{"pinned", v1.InstancetypeMatcher{Name: "u1.small"}, ref("u1.small", v1.ClusterInstancetypeKind), ""},
		{"pinned to the one named before", v1.InstancetypeMatcher{Name: "u1.large"}, ref("u1.small", v1.ClusterInstancetypeKind), v1.ClusterInstancetypeKind + "//u1.large"},
		{"revision in the spec", v1.InstancetypeMatcher{Name: "u1.small", RevisionName: "mine"}, nil, ""},
		{"namespaced", v1.InstancetypeMatcher{Name: "t", Kind: "virtualmachineinstancetype"}, nil, v1.InstancetypeKind + "/ns/t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := newVM(v1.RunStrategyAlways)
			vm.Spec.Instancetype, vm.Status.InstancetypeRef = &tt.matcher, tt.status
			keys, _ := unpinnedRefs(vm)
			if got := strings.Join(keys, ","); got != tt.want {
				t.Errorf("keys %q, want %q", got, tt.want)
			}
		})
	}
}
