// Package expectations remembers the creations and deletions a controller has asked the API
// server for and not yet seen in its informers, so a sync under informer lag never creates or
// deletes twice. It follows the ReplicaSet controller's design: counts for creations, UIDs
// for deletions (a delete may be observed more than once), and a TTL so a lost event cannot
// wedge a controller forever.
package expectations

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultTTL is how long an unmet expectation holds before the controller syncs anyway.
const DefaultTTL = 5 * time.Minute

// Expectations is safe for concurrent use by event handlers and workers.
type Expectations struct {
	mu      sync.Mutex
	pending map[string]*pending
	ttl     time.Duration
	clock   clock.PassiveClock
}

type pending struct {
	creations int
	deletions map[types.UID]bool
	since     time.Time
}

// New returns empty expectations with DefaultTTL.
func New() *Expectations { return NewWithClock(clock.RealClock{}, DefaultTTL) }

// NewWithClock lets tests control time.
func NewWithClock(c clock.PassiveClock, ttl time.Duration) *Expectations {
	return &Expectations{pending: map[string]*pending{}, ttl: ttl, clock: c}
}

// ExpectCreations records that key's sync is about to create n objects.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(key).creations += n
}

// ExpectDeletions records that key's sync is about to delete the objects with these UIDs.
func (e *Expectations) ExpectDeletions(key string, uids ...types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.entry(key)
	for _, uid := range uids {
		p.deletions[uid] = true
	}
}

// CreationObserved lowers key's pending creations: an informer saw one, or a create failed.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pending[key]; ok && p.creations > 0 {
		p.creations--
	}
}

// DeletionObserved forgets a pending deletion: an informer saw it gone, or the delete failed.
func (e *Expectations) DeletionObserved(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pending[key]; ok {
		delete(p.deletions, uid)
	}
}

// Satisfied reports whether key may sync: nothing pending, or the expectations expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pending[key]
	if !ok {
		return true
	}
	if p.creations <= 0 && len(p.deletions) == 0 {
		return true
	}
	return e.clock.Since(p.since) > e.ttl
}

// CreationsPending reports whether key still waits to see objects it created (and the
// expectation has not expired): a VM whose instance is on its way is starting.
func (e *Expectations) CreationsPending(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pending[key]
	return ok && p.creations > 0 && e.clock.Since(p.since) <= e.ttl
}

// DeletionPending reports whether key still waits to see the object with uid gone (and the
// expectation has not expired): a VM whose instance it deleted is stopping.
func (e *Expectations) DeletionPending(key string, uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pending[key]
	return ok && p.deletions[uid] && e.clock.Since(p.since) <= e.ttl
}

// Forget drops everything pending for key, when its owner is gone or its sync starts over.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
}

// entry returns key's record, resetting it when it was already satisfied or expired so new
// expectations start their TTL afresh. The caller holds the lock.
func (e *Expectations) entry(key string) *pending {
	p, ok := e.pending[key]
	if !ok || (p.creations <= 0 && len(p.deletions) == 0) || e.clock.Since(p.since) > e.ttl {
		p = &pending{deletions: map[types.UID]bool{}, since: e.clock.Now()}
		e.pending[key] = p
	}
	return p
}
