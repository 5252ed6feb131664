package replicaset

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// queued drains the controller's queue, sorted.
func (f *fixture) queued() []string {
	var keys []string
	for f.c.queue.Len() > 0 {
		key, _ := f.c.queue.Get()
		f.c.queue.Done(key)
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func selecting(name, app string) *v1.VirtualMachineInstanceReplicaSet {
	rs := newRS(1)
	rs.Name, rs.UID = name, types.UID(name+"-uid")
	rs.Spec.Selector.MatchLabels = map[string]string{"app": app}
	rs.Spec.Template.ObjectMeta.Labels = map[string]string{"app": app}
	return rs
}

func TestEventHandlersEnqueue(t *testing.T) {
	web, db := selecting("web", "web"), selecting("db", "db")
	orphan := instance(web, "orphan", v1.Running, false, 0)
	orphan.OwnerReferences = nil
	orphan.ResourceVersion = "1"
	relabelled := orphan.DeepCopy()
	relabelled.Labels = map[string]string{"app": "db"}
	relabelled.ResourceVersion = "2"
	owned := instance(web, "owned", v1.Running, false, 0)
	foreign := instance(web, "foreign", v1.Running, false, 0)
	foreign.OwnerReferences[0].UID = "someone-else"
	terminating := owned.DeepCopy()
	terminating.ResourceVersion, terminating.DeletionTimestamp = "2", &created0

	tests := []struct {
		name  string
		event func(c *Controller)
		want  []string
	}{
		{"orphan added: every replica set selecting it", func(c *Controller) { c.addVMI(orphan) }, []string{"ns/web"}},
		{"orphan relabelled: old and new matches", func(c *Controller) { c.updateVMI(orphan, relabelled) }, []string{"ns/db", "ns/web"}},
		{"resync without change", func(c *Controller) { c.updateVMI(orphan, orphan) }, nil},
		{"owned added: its controller", func(c *Controller) { c.addVMI(owned) }, []string{"ns/web"}},
		{"owned by a replica set's predecessor", func(c *Controller) { c.addVMI(foreign) }, nil},
		{"owned deleted via tombstone", func(c *Controller) {
			c.deleteVMI(cache.DeletedFinalStateUnknown{Key: "ns/owned", Obj: owned})
		}, []string{"ns/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{web, db}, nil)
			tt.event(f.c)
			if got := f.queued(); !slices.Equal(got, tt.want) {
				t.Errorf("queued %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("observations lower the expectations", func(t *testing.T) {
		f := newFixture(t, []*v1.VirtualMachineInstanceReplicaSet{web, db}, nil)
		f.c.expectations.ExpectCreations("ns/web", 1)
		f.c.addVMI(owned)
		f.c.expectations.ExpectDeletions("ns/web", owned.UID)
		if f.c.expectations.Satisfied("ns/web") {
			t.Fatal("expectations satisfied before the deletion was seen")
		}
		// A terminating instance is as good as gone.
		f.c.updateVMI(owned, terminating)
		if !f.c.expectations.Satisfied("ns/web") {
			t.Error("observed creation and deletion did not satisfy the expectations")
		}
		f.c.expectations.ExpectDeletions("ns/web", owned.UID)
		f.c.deleteVMI(cache.DeletedFinalStateUnknown{Key: "ns/owned", Obj: owned})
		if !f.c.expectations.Satisfied("ns/web") {
			t.Error("a deletion seen through a tombstone did not satisfy the expectations")
		}
	})
}
