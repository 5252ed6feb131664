package health

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxWait bounds the ?wait= of a check.
const maxWait = time.Minute

// waitPoll is how often a held probe that is not a Flag is asked again.
const waitPoll = 100 * time.Millisecond

// lastAnswer is whether an endpoint's last held answer passed. Before the first it is a
// failure, as the kubelet assumes of a container it has not probed yet.
type lastAnswer struct{ passed atomic.Bool }

// hold is ?wait=DURATION: it holds the probe's answer while it is the one the endpoint last
// gave a held request, until it changes, the duration elapses or the client goes, and
// answers then. So a kubelet probing /readyz?wait=60s (timeoutSeconds above 60) hears news the
// moment there is some, both ways: the pod turns Ready the moment its VM does and unready the
// moment it stops being. Without news it hears once per wait instead of once per period: while
// the component waits for its work, one failed probe (one Unhealthy event, an API write) a
// minute; once ready, one probe a minute instead of one per period, each costing the kubelet
// and the component a connection.
//
// A Flag wakes the held answer when it is set; other probes are asked every waitPoll.
func (l *lastAnswer) hold(ctx context.Context, p Probe, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	passed := l.passed.Load()
	for {
		changed, err := stateOf(p)
		if (err == nil) != passed {
			l.passed.Store(err == nil)
			return err
		}
		// One of the two is nil, and a nil channel never receives.
		var poll <-chan time.Time
		if changed == nil {
			poll = time.After(waitPoll)
		}
		select {
		case <-ctx.Done():
			return err
		case <-changed:
		case <-poll:
		}
	}
}

// stateOf is, for a Flag, the channel closed at its next change (nil otherwise), and the
// probe's answer.
func stateOf(p Probe) (<-chan struct{}, error) {
	if f, ok := p.(*Flag); ok {
		return f.state()
	}
	return nil, p.Check()
}

// waitParam reads ?wait= as a Go duration ("20s") or whole seconds ("20").
func waitParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, serr := strconv.Atoi(v)
		if serr != nil {
			return 0, fmt.Errorf("wait=%q: want a duration such as 20s", v)
		}
		d = time.Duration(secs) * time.Second
	}
	if d < 0 || d > maxWait {
		return 0, fmt.Errorf("wait=%q: want a duration from 0 to %s", v, maxWait)
	}
	return d, nil
}

// Flag is a readiness the component sets as its work comes and goes; Check is its answer. A
// held probe of a Flag wakes when it is set instead of asking again and again: an idle
// process woken ten times a second costs more than the probe it spares.
type Flag struct {
	notReady error
	mu       sync.Mutex
	ready    bool
	// changed is closed, and replaced, at each change.
	changed chan struct{}
}

// NewFlag is a Flag not ready yet, whose failing answer is notReady.
func NewFlag(notReady error) *Flag {
	return &Flag{notReady: notReady, changed: make(chan struct{})}
}

// Set records whether the component is ready, wakes the held probes if that changed, and
// says what it was.
func (f *Flag) Set(ready bool) (was bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	was = f.ready
	if ready != was {
		f.ready = ready
		close(f.changed)
		f.changed = make(chan struct{})
	}
	return was
}

// Check is nil while the flag is set ready.
func (f *Flag) Check() error {
	_, err := f.state()
	return err
}

// state is the channel closed at the flag's next change and its answer, read together.
func (f *Flag) state() (<-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ready {
		return f.changed, nil
	}
	return f.changed, f.notReady
}
