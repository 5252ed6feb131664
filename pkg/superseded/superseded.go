// Package superseded remembers which cached objects a controller's own writes have replaced.
// After a successful write, the informer's copy is stale until the watch delivers the new one;
// a sync in between (another event on the same object) would compute from stale data and write
// again, to be refused with a conflict at best. A controller that asks Stale first skips that
// sync: the watch event of its own write queues the object again.
package superseded

import "sync"

// Versions holds, per key, the resourceVersion the controller's last write replaced.
type Versions struct {
	mu       sync.Mutex
	replaced map[string]string
}

func New() *Versions { return &Versions{replaced: map[string]string{}} }

// Wrote records that a write replaced the object of key at resourceVersion rv. An object
// without one (fake clientsets set none) is not recorded.
func (v *Versions) Wrote(key, rv string) {
	if rv == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.replaced[key] = rv
}

// Stale says whether the cached object of key, at resourceVersion rv, is one a write of the
// controller replaced. Once the cache holds a newer object, the record is dropped.
func (v *Versions) Stale(key, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	old, ok := v.replaced[key]
	if ok && old != rv {
		delete(v.replaced, key)
	}
	return ok && old == rv
}

// Forget drops what is known of key (the object is gone).
func (v *Versions) Forget(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.replaced, key)
}
