package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxWait bounds the ?wait= of a check.
const maxWait = time.Minute

// waitPoll is how often a held check that is not a Flag's is asked again.
const waitPoll = 100 * time.Millisecond

// holdFailure is the ?wait=DURATION of /readyz and /healthz: a failing check is held until it
// passes, the duration elapses or the client goes, and answered then; a passing one is
// answered at once.
//
// A kubelet probing /readyz?wait=20s, with a timeoutSeconds above 20, so fails one probe (one
// Unhealthy event, an API write) per 20 s while the component waits for its work instead of
// one per period, and still sees it ready within a moment. Passes are not held: a probe begun
// just after a change would hold the new answer while the kubelet still believes the old one.
//
// A Flag's check wakes the held answer when it is set; other checks are asked every waitPoll.
func holdFailure(ctx context.Context, check Check, err error, hold time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, hold)
	defer cancel()
	for err != nil {
		// One of the two is nil, and a nil channel never receives.
		var changed <-chan struct{}
		var poll <-chan time.Time
		if flagged := (flagError{}); errors.As(err, &flagged) {
			changed = flagged.changed
		} else {
			poll = time.After(waitPoll)
		}
		select {
		case <-ctx.Done():
			return err
		case <-changed:
		case <-poll:
		}
		err = check()
	}
	return nil
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
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ready {
		return nil
	}
	return flagError{f.notReady, f.changed}
}

// flagError is a Flag's failing answer, with the channel closed at the flag's next change.
type flagError struct {
	error
	changed <-chan struct{}
}

func (e flagError) Unwrap() error { return e.error }
