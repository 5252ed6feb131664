package replicaset

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestSyncAdoptsAMatchingOrphan(t *testing.T) {
	rs := newRS(1)
	orphan := instance(rs, "orphan", v1.Running, true, 0)
	orphan.OwnerReferences = nil
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{orphan})
	if got, want := verbs(f.sync("ns/rs")), "patch virtualmachineinstances, update virtualmachineinstancereplicasets/status"; got != want {
		t.Fatalf("actions: %s, want %s (an adoption and no create)", got, want)
	}
	vmi, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "orphan", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(vmi); ref == nil || ref.UID != rs.UID {
		t.Errorf("owner reference %+v, want controller %s", ref, rs.UID)
	}
	if s := f.storedRS().Status; s.Replicas != 1 || s.ReadyReplicas != 1 {
		t.Errorf("status replicas %d ready %d, want the adopted instance counted", s.Replicas, s.ReadyReplicas)
	}
}

func TestSyncLeavesWhatItMustNotAdopt(t *testing.T) {
	rs := newRS(1)
	other := instance(rs, "other", v1.Running, true, 0)
	other.Labels = map[string]string{"app": "db"}
	other.OwnerReferences = nil
	foreign := instance(rs, "foreign", v1.Running, true, 0)
	foreign.OwnerReferences[0].UID = "someone-else"
	terminating := instance(rs, "terminating", v1.Running, true, 0)
	terminating.OwnerReferences = nil
	terminating.DeletionTimestamp = &created0
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{other, foreign, terminating})
	if got := verbs(f.sync("ns/rs")); strings.Contains(got, "patch") || !strings.HasPrefix(got, "create virtualmachineinstances") {
		t.Errorf("actions: %s, want no patch and a create", got)
	}
}

func TestSyncDoesNotAdoptForAReplacedReplicaSet(t *testing.T) {
	rs := newRS(1)
	orphan := instance(rs, "orphan", v1.Running, true, 0)
	orphan.OwnerReferences = nil
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{orphan})
	// The API server already holds a namesake; the cache still shows the old one.
	successor := rs.DeepCopy()
	successor.UID = "successor-uid"
	_ = f.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("virtualmachineinstancereplicasets"), successor, "ns")
	writes, err := f.trySync("ns/rs")
	if err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("sync error %v, want the replacement reported", err)
	}
	if got := verbs(writes); got != "" {
		t.Errorf("actions: %s, want none", got)
	}
}

func TestSyncReleasesAnInstanceItNoLongerSelects(t *testing.T) {
	rs := newRS(1)
	relabelled := instance(rs, "relabelled", v1.Running, true, 0)
	relabelled.Labels = map[string]string{"app": "debug"}
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{relabelled})
	if got, want := verbs(f.sync("ns/rs")), "patch virtualmachineinstances, create virtualmachineinstances, update virtualmachineinstancereplicasets/status"; got != want {
		t.Fatalf("actions: %s, want %s (a release and a replacement)", got, want)
	}
	vmi, _ := f.client.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "relabelled", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(vmi); ref != nil {
		t.Errorf("owner reference %+v left after release", ref)
	}
}

func TestSyncOfADeletedReplicaSetOnlyCounts(t *testing.T) {
	rs := newRS(3)
	rs.DeletionTimestamp = &created0
	orphan := instance(rs, "orphan", v1.Running, true, 0)
	orphan.OwnerReferences = nil
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, []*v1.VirtualMachineInstance{instance(rs, "a", v1.Running, true, 0), orphan})
	if got := verbs(f.sync("ns/rs")); got != "update virtualmachineinstancereplicasets/status" {
		t.Fatalf("actions: %s, want only a status update", got)
	}
	if s := f.storedRS().Status; s.Replicas != 1 {
		t.Errorf("status replicas %d, want 1", s.Replicas)
	}
}
