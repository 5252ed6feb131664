package handler

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// A launcher that hangs costs a worker a whole timeout on every attempt, and its instance is
// enqueued again by every event (its own status write included), bypassing the queue's
// backoff. launcherGate keeps such instances away from the workers until their own backoff
// has passed, so a few hung launchers never take all of them.
const (
	faultBackoffBase = 5 * time.Second
	faultBackoffMax  = time.Minute
)

type launcherGate struct {
	clock   clock.PassiveClock
	backoff workqueue.TypedRateLimiter[string]

	mu    sync.Mutex
	until map[string]time.Time
}

func newLauncherGate(clk clock.PassiveClock) *launcherGate {
	return &launcherGate{
		clock:   clk,
		backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[string](faultBackoffBase, faultBackoffMax),
		until:   map[string]time.Time{},
	}
}

// closed is how long key must still wait; zero when it may go to its launcher.
func (g *launcherGate) closed(key string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d := g.until[key].Sub(g.clock.Now()); d > 0 {
		return d
	}
	return 0
}

// trip closes the gate for key's next backoff step and returns it.
func (g *launcherGate) trip(key string) time.Duration {
	d := g.backoff.When(key)
	g.mu.Lock()
	g.until[key] = g.clock.Now().Add(d)
	g.mu.Unlock()
	return d
}

// reset forgets key's faults: its launcher answered.
func (g *launcherGate) reset(key string) {
	g.backoff.Forget(key)
	g.mu.Lock()
	delete(g.until, key)
	g.mu.Unlock()
}
