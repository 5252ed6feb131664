package replicaset

import (
	"strings"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestSyncWritesStatusOnce(t *testing.T) {
	rs := newRS(3)
	vmis := []*v1.VirtualMachineInstance{
		instance(rs, "a", v1.Running, true, 0), instance(rs, "b", v1.Running, true, 1), instance(rs, "c", v1.Scheduled, false, 2),
	}
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, vmis)
	if got := verbs(f.sync("ns/rs")); got != "update virtualmachineinstancereplicasets/status" {
		t.Fatalf("actions: %s, want only a status update", got)
	}
	stored := f.storedRS()
	if s := stored.Status; s.Replicas != 3 || s.ReadyReplicas != 2 || s.LabelSelector != "app=web" || len(s.Conditions) != 0 {
		t.Errorf("status %+v, want 3 replicas, 2 ready, selector app=web, no conditions", s)
	}
	_ = f.rsIndexer().Update(stored)
	if got := verbs(f.sync("ns/rs")); got != "" {
		t.Errorf("second sync of an unchanged replica set wrote: %s", got)
	}
}

func TestSyncKeepsConditionTransitionTimes(t *testing.T) {
	rs := newRS(1)
	rs.Spec.Paused = true
	f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{rs}, nil)
	f.sync("ns/rs")
	stored := f.storedRS()
	_ = f.rsIndexer().Update(stored)
	if got := verbs(f.sync("ns/rs")); got != "" {
		t.Errorf("second sync of an unchanged paused replica set wrote: %s", got)
	}

	// Resuming removes the condition and scales again.
	resumed := stored.DeepCopy()
	resumed.Spec.Paused = false
	_ = f.rsIndexer().Update(resumed)
	if got, want := verbs(f.sync("ns/rs")), "create virtualmachineinstances, update virtualmachineinstancereplicasets/status"; got != want {
		t.Fatalf("actions after resume: %s, want %s", got, want)
	}
	if c := condition(&f.storedRS().Status, v1.VirtualMachineInstanceReplicaSetReplicaPaused); c != nil {
		t.Errorf("ReplicaPaused %+v left after resume", c)
	}
}

func TestSyncReportsAnInvalidSpecWithoutRetrying(t *testing.T) {
	badSelector := newRS(2)
	badSelector.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	mismatch := newRS(2)
	mismatch.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "db"}
	noSelector := newRS(2)
	noSelector.Spec.Selector = nil

	tests := []struct {
		name    string
		rs      *v1.VirtualMachineInstanceReplicaSet
		message string
	}{
		{"invalid selector", badSelector, `"Near" is not a valid label selector operator`},
		{"template labels not selected", mismatch, "does not match spec.template.metadata.labels"},
		{"no selector", noSelector, "spec.selector: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owned := instance(tt.rs, "owned", v1.Running, true, 0)
			f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{tt.rs}, []*v1.VirtualMachineInstance{owned})
			writes, err := f.trySync("ns/rs")
			if err != nil {
				t.Fatalf("sync error %v, want nil: retrying cannot fix the spec", err)
			}
			if got := verbs(writes); got != "update virtualmachineinstancereplicasets/status" {
				t.Fatalf("actions: %s, want only a status update", got)
			}
			failure := condition(&f.storedRS().Status, v1.VirtualMachineInstanceReplicaSetReplicaFailure)
			if failure == nil || failure.Status != k8sv1.ConditionTrue || failure.Reason != InvalidSpec ||
				!strings.Contains(failure.Message, "spec.selector") || !strings.Contains(failure.Message, tt.message) {
				t.Errorf("ReplicaFailure %+v, want True naming spec.selector and %q", failure, tt.message)
			}
			events := f.events()
			if len(events) != 1 || !strings.HasPrefix(events[0], k8sv1.EventTypeWarning+" "+InvalidSpec) || !strings.Contains(events[0], tt.message) {
				t.Errorf("events %q, want one %s warning saying %q", events, InvalidSpec, tt.message)
			}
			// Synced again unchanged (an instance event): no write, no second warning.
			_ = f.rsIndexer().Update(f.storedRS())
			if writes, err := f.trySync("ns/rs"); err != nil || len(writes) > 0 || len(f.events()) > 0 {
				t.Errorf("second sync: error %v, actions %s, events recorded again", err, verbs(writes))
			}
		})
	}
}
