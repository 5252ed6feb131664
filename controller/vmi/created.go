package vmi

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// createdPods remembers, per instance key, the launcher pod this controller created, until the
// instance is gone: the status write that records it in activePods comes a sync later, and
// until then the pod's UID is what tells it from a pod someone else made to claim the instance.
type createdPods struct {
	mu   sync.Mutex
	uids map[string]types.UID
}

func (c *createdPods) set(key string, uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uids == nil {
		c.uids = map[string]types.UID{}
	}
	c.uids[key] = uid
}

func (c *createdPods) get(key string) types.UID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uids[key]
}

func (c *createdPods) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.uids, key)
}
