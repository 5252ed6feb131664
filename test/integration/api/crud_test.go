package api

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

type object interface {
	metav1.Object
	runtime.Object
}

// typedClient is the part of every generated typed client these tests exercise.
type typedClient[T object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// statusWriter writes an object's status: UpdateStatus, or Update for the instance, whose
// status is no subresource (as in KubeVirt).
type statusWriter[T object] func(context.Context, T, metav1.UpdateOptions) (T, error)

// exerciseCRUD creates, gets, lists, watches, updates the status of and deletes one object,
// checking that the status update is stored and seen by the watch.
func exerciseCRUD[T object, L runtime.Object](t *testing.T, c typedClient[T, L], writeStatus statusWriter[T], obj T, setStatus func(T), statusSet func(T) bool) {
	ctx := context.Background()
	w, err := c.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := c.Get(ctx, created.GetName(), metav1.GetOptions{})
	if err != nil || got.GetUID() != created.GetUID() {
		t.Fatalf("get: %v (uid %v, want %v)", err, got.GetUID(), created.GetUID())
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if n := meta.LenList(list); n != 1 {
		t.Fatalf("list has %d items, want 1", n)
	}
	setStatus(got)
	updated, err := writeStatus(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if !statusSet(updated) {
		t.Fatalf("status not stored: %#v", updated)
	}
	if err := c.Delete(ctx, created.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	expectEvents(t, w, watch.Added, watch.Modified, watch.Deleted)
}

func expectEvents(t *testing.T, w watch.Interface, want ...watch.EventType) {
	t.Helper()
	for _, typ := range want {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != typ {
				t.Fatalf("watch event %s, want %s", ev.Type, typ)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s watch event", typ)
		}
	}
}

func TestVirtualMachineCRUD(t *testing.T) {
	ns := newNamespace(t)
	c := virt.KubevirtV1().VirtualMachines(ns)
	exerciseCRUD(t, c, c.UpdateStatus, newVM("crud"),
		func(vm *v1.VirtualMachine) {
			vm.Status = v1.VirtualMachineStatus{PrintableStatus: v1.VirtualMachineStatusStopped, RunStrategy: v1.RunStrategyHalted}
		},
		func(vm *v1.VirtualMachine) bool { return vm.Status.PrintableStatus == v1.VirtualMachineStatusStopped })
}

func TestVirtualMachineInstanceCRUD(t *testing.T) {
	ns := newNamespace(t)
	c := virt.KubevirtV1().VirtualMachineInstances(ns)
	exerciseCRUD(t, c, c.Update, newVMI("crud"),
		func(vmi *v1.VirtualMachineInstance) {
			vmi.Status = v1.VirtualMachineInstanceStatus{Phase: v1.Scheduling, NodeName: "node-a"}
		},
		func(vmi *v1.VirtualMachineInstance) bool {
			return vmi.Status.Phase == v1.Scheduling && vmi.Status.NodeName == "node-a"
		})
}

func TestVirtualMachineInstanceReplicaSetCRUD(t *testing.T) {
	ns := newNamespace(t)
	c := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns)
	exerciseCRUD(t, c, c.UpdateStatus, newVMIRS("crud", 2),
		func(rs *v1.VirtualMachineInstanceReplicaSet) {
			rs.Status = v1.VirtualMachineInstanceReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, LabelSelector: "rs=crud"}
		},
		func(rs *v1.VirtualMachineInstanceReplicaSet) bool {
			return rs.Status.Replicas == 2 && rs.Status.ReadyReplicas == 1
		})
}

func TestStatusIsASubresource(t *testing.T) {
	ns := newNamespace(t)
	vm := newVM("status")
	vm.Status.PrintableStatus = v1.VirtualMachineStatusRunning
	created, err := virt.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Status.PrintableStatus != "" {
		t.Errorf("create stored status %q; status must only change through the status subresource", created.Status.PrintableStatus)
	}
}
