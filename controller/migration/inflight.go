package migration

import (
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

var everything = labels.Everything()

// inFlight are the migrations this controller moved past Pending whose new phase the cache
// has not shown yet, by key, with their source node. Only the one worker touches it.
type inFlight struct{ started map[string]string }

func newInFlight() *inFlight { return &inFlight{started: map[string]string{}} }

func (f *inFlight) start(key, sourceNode string) { f.started[key] = sourceNode }
func (f *inFlight) forget(key string)            { delete(f.started, key) }

// busy says whether a migration holds a slot: past Pending and not over.
func busy(m *v1.VirtualMachineInstanceMigration) bool {
	p := m.Status.Phase
	return p != v1.MigrationPhaseUnset && p != v1.MigrationPending && !p.IsFinal()
}

// count is how many migrations hold a slot in the cluster, and how many leave node.
func (f *inFlight) count(all []*v1.VirtualMachineInstanceMigration, node string) (cluster, fromNode int) {
	counted := map[string]bool{}
	for _, m := range all {
		key := m.Namespace + "/" + m.Name
		if p := m.Status.Phase; p != v1.MigrationPhaseUnset && p != v1.MigrationPending {
			f.forget(key) // the cache caught up with this controller's write
		}
		if !busy(m) {
			continue
		}
		counted[key] = true
		cluster++
		if s := m.Status.MigrationState; s != nil && s.SourceNode == node {
			fromNode++
		}
	}
	for key, source := range f.started {
		if !counted[key] {
			cluster++
			if source == node {
				fromNode++
			}
		}
	}
	return cluster, fromNode
}
