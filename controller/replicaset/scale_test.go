package replicaset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestSyncScalesUpFromZero(t *testing.T) {
	rs := newRS(5)
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, nil)
	if got, want := verbs(f.sync("ns/rs")), "create virtualmachineinstances x5, update virtualmachineinstancereplicasets/status"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	list, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != 5 {
		t.Fatalf("%d instances, want 5", len(list.Items))
	}
	for _, vmi := range list.Items {
		if vmi.GenerateName != "rs-" || !strings.HasPrefix(vmi.Name, "rs-") {
			t.Errorf("instance %q generateName %q, want rs-<random>", vmi.Name, vmi.GenerateName)
		}
		if ref := metav1.GetControllerOf(&vmi); ref == nil || ref.UID != rs.UID || ref.Kind != "VirtualMachineInstanceReplicaSet" || !*ref.BlockOwnerDeletion {
			t.Errorf("instance %s owner reference %+v, want controller %s blocking deletion", vmi.Name, ref, rs.UID)
		}
		if vmi.Labels["app"] != "web" || vmi.Labels["tier"] != "front" || vmi.Annotations["note"] != "kept" {
			t.Errorf("instance %s labels %v annotations %v, want the template's", vmi.Name, vmi.Labels, vmi.Annotations)
		}
		if !slices.Equal(vmi.Finalizers, []string{v1.VirtualMachineInstanceFinalizer}) {
			t.Errorf("instance %s finalizers %v", vmi.Name, vmi.Finalizers)
		}
	}
	if events := f.events(); len(events) != 5 || !strings.Contains(events[0], SuccessfulCreate) {
		t.Errorf("events %q, want 5 x %s", events, SuccessfulCreate)
	}
}

func TestSyncStopsCreatingAtTheFirstFailedBatch(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{newRS(10)}, nil)
	var calls atomic.Int32
	f.client.PrependReactor("create", "virtualmachineinstances", func(core.Action) (bool, runtime.Object, error) {
		if calls.Add(1) > 2 {
			return true, nil, errors.New("quota exceeded")
		}
		return false, nil, nil
	})
	writes, err := f.trySync("ns/rs")
	if err == nil || !strings.Contains(err.Error(), "quota exceeded") {
		t.Fatalf("sync error %v, want the create failure", err)
	}
	// Batches 1 and 2 ran (3 calls, one failed); batch 4 never started.
	if got, want := verbs(writes), "create virtualmachineinstances x3, update virtualmachineinstancereplicasets/status"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	failure := condition(&f.storedRS().Status, v1.VirtualMachineInstanceReplicaSetReplicaFailure)
	if failure == nil || failure.Reason != FailedCreate || !strings.Contains(failure.Message, "quota exceeded") {
		t.Errorf("ReplicaFailure %+v, want FailedCreate with the error", failure)
	}
	if !slices.ContainsFunc(f.events(), func(e string) bool { return strings.Contains(e, FailedCreate) }) {
		t.Error("no FailedCreate event")
	}
}

func TestSlowStart(t *testing.T) {
	tests := []struct {
		count, failAt  int // failAt: the first failing call, 0 for none
		calls, success int
	}{
		{count: 0, calls: 0, success: 0},
		{count: 1, calls: 1, success: 1},
		{count: 5, calls: 5, success: 5},
		{count: 10, failAt: 1, calls: 1, success: 0},
		{count: 10, failAt: 4, calls: 7, success: 3},
	}
	for _, tt := range tests {
		var calls atomic.Int32
		success, err := slowStart(tt.count, func() error {
			if n := int(calls.Add(1)); tt.failAt > 0 && n >= tt.failAt {
				return errors.New("boom")
			}
			return nil
		})
		if int(calls.Load()) != tt.calls || success != tt.success || (err != nil) != (tt.failAt > 0) {
			t.Errorf("slowStart(%d) failing from call %d: %d calls, %d succeeded, err %v; want %d calls, %d succeeded",
				tt.count, tt.failAt, calls.Load(), success, err, tt.calls, tt.success)
		}
	}
}

func TestSyncScalesDown(t *testing.T) {
	rs := newRS(2)
	tests := []struct {
		name    string
		vmis    []*v1.VirtualMachineInstance
		deleted []string
	}{
		{"not yet running before running", []*v1.VirtualMachineInstance{
			instance(rs, "running", v1.Running, true, 0), instance(rs, "scheduled", v1.Scheduled, false, 0),
			instance(rs, "pending", v1.Pending, false, 0), instance(rs, "running2", v1.Running, true, 1),
			instance(rs, "unset", v1.VmPhaseUnset, false, 0),
		}, []string{"pending", "scheduled", "unset"}},
		{"not ready before ready", []*v1.VirtualMachineInstance{
			instance(rs, "ready1", v1.Running, true, 3), instance(rs, "unready", v1.Running, false, 0),
			instance(rs, "ready2", v1.Running, true, 4),
		}, []string{"unready"}},
		{"newest first", []*v1.VirtualMachineInstance{
			instance(rs, "m0", v1.Running, true, 0), instance(rs, "m1", v1.Running, true, 1), instance(rs, "m2", v1.Running, true, 2),
			instance(rs, "m3", v1.Running, true, 3), instance(rs, "m4", v1.Running, true, 4),
		}, []string{"m2", "m3", "m4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, tt.vmis)
			writes := f.sync("ns/rs")
			if got := deleted(writes); !slices.Equal(got, tt.deleted) {
				t.Fatalf("deleted %v, want %v (actions: %s)", got, tt.deleted, verbs(writes))
			}
			for _, a := range writes {
				if d, ok := a.(core.DeleteAction); ok {
					if p := d.GetDeleteOptions().Preconditions; p == nil || p.UID == nil || string(*p.UID) != d.GetName()+"-uid" {
						t.Errorf("delete of %s without its UID as precondition", d.GetName())
					}
				}
			}
			// The cache still shows them: the next sync must not delete again.
			if got := verbs(f.sync("ns/rs")); strings.Contains(got, "delete") {
				t.Errorf("second sync under informer lag: %s", got)
			}
		})
	}
}

func TestSyncExpectationsBlockASecondCreate(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{newRS(3)}, nil)
	f.sync("ns/rs")
	if got := verbs(f.sync("ns/rs")); strings.Contains(got, "create") {
		t.Fatalf("second sync under informer lag: %s", got)
	}
	// The informer catches up: the creations are observed, and nothing more is created.
	list, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").List(context.Background(), metav1.ListOptions{})
	for i := range list.Items {
		vmi := &list.Items[i]
		_ = f.factory.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Add(vmi)
		f.c.addVMI(vmi)
	}
	if !f.c.expectations.Satisfied("ns/rs") {
		t.Fatal("observed creations did not satisfy the expectations")
	}
	if got := verbs(f.sync("ns/rs")); strings.Contains(got, "create") {
		t.Errorf("sync after the informer caught up: %s", got)
	}
}

func TestSyncReplacesFinishedInstances(t *testing.T) {
	rs := newRS(2)
	for _, phase := range []v1.VirtualMachineInstancePhase{v1.Failed, v1.Succeeded} {
		t.Run(string(phase), func(t *testing.T) {
			vmis := []*v1.VirtualMachineInstance{instance(rs, "alive", v1.Running, true, 0), instance(rs, "done", phase, false, 0)}
			f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, vmis)
			writes := f.sync("ns/rs")
			if got, want := verbs(writes), "delete virtualmachineinstances, create virtualmachineinstances, update virtualmachineinstancereplicasets/status"; got != want {
				t.Fatalf("actions: %s, want %s", got, want)
			}
			if got := deleted(writes); !slices.Equal(got, []string{"done"}) {
				t.Errorf("deleted %v, want [done]", got)
			}
			if s := f.storedRS().Status; s.Replicas != 1 || s.ReadyReplicas != 1 {
				t.Errorf("status replicas %d ready %d, want 1/1: a finished instance is no replica", s.Replicas, s.ReadyReplicas)
			}
		})
	}
}

func TestSyncDoesNotCountTerminatingInstances(t *testing.T) {
	rs := newRS(1)
	going := instance(rs, "going", v1.Running, true, 0)
	going.DeletionTimestamp = &created0
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{going})
	if got, want := verbs(f.sync("ns/rs")), "create virtualmachineinstances"; !strings.HasPrefix(got, want) || strings.Contains(got, "delete") {
		t.Errorf("actions: %s, want a replacement and no delete", got)
	}
}

func TestSyncPaused(t *testing.T) {
	rs := newRS(1)
	rs.Spec.Paused = true
	tests := []struct {
		name string
		vmis []*v1.VirtualMachineInstance
	}{
		{"too few", nil},
		{"too many", []*v1.VirtualMachineInstance{instance(rs, "a", v1.Running, true, 0), instance(rs, "b", v1.Running, true, 1)}},
		{"finished", []*v1.VirtualMachineInstance{instance(rs, "a", v1.Failed, false, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, tt.vmis)
			if got := verbs(f.sync("ns/rs")); got != "update virtualmachineinstancereplicasets/status" {
				t.Fatalf("actions: %s, want only a status update", got)
			}
			paused := condition(&f.storedRS().Status, v1.VirtualMachineInstanceReplicaSetReplicaPaused)
			if paused == nil || paused.Status != k8sv1.ConditionTrue {
				t.Errorf("ReplicaPaused %+v, want True", paused)
			}
		})
	}
}

func TestSyncCapsABurst(t *testing.T) {
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{newRS(10)}, nil)
	f.c.burst = 4
	if got, want := verbs(f.sync("ns/rs")), "create virtualmachineinstances x4, update virtualmachineinstancereplicasets/status"; got != want {
		t.Errorf("actions: %s, want %s", got, want)
	}
}
