package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAnswerWait: on a fresh endpoint, ?wait= holds a failing check until it passes or the wait
// ends, answers a passing one at once, and a malformed or unbounded wait is refused by name.
func TestAnswerWait(t *testing.T) {
	tests := []struct {
		name  string
		query string
		// answers are the check's results, one per call; the last one repeats.
		answers []bool
		want    int
	}{
		{"no wait, failing", "", []bool{false}, http.StatusServiceUnavailable},
		{"no wait, passing", "", []bool{true}, http.StatusOK},
		{"failing, held until it passes", "?wait=30s", []bool{false, false, false, true}, http.StatusOK},
		{"passing is answered at once", "?wait=30s", []bool{true, false}, http.StatusOK},
		{"whole seconds", "?wait=30", []bool{false, false, true}, http.StatusOK},
		{"failing until the wait ends", "?wait=300ms", []bool{false}, http.StatusServiceUnavailable},
		{"zero wait", "?wait=0s", []bool{false, true}, http.StatusServiceUnavailable},
		{"malformed", "?wait=soon", []bool{true}, http.StatusBadRequest},
		{"beyond maxWait", "?wait=2m", []bool{true}, http.StatusBadRequest},
		{"negative", "?wait=-1s", []bool{true}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			check := func() error {
				i := min(int(calls.Add(1)), len(tt.answers)) - 1
				if tt.answers[i] {
					return nil
				}
				return errors.New("VM not Ready")
			}
			rec := httptest.NewRecorder()
			answer(Check(check))(rec, httptest.NewRequest(http.MethodGet, "/readyz"+tt.query, nil))
			if rec.Code != tt.want {
				t.Errorf("GET /readyz%s = %d (%s), want %d", tt.query, rec.Code, strings.TrimSpace(rec.Body.String()), tt.want)
			}
			if rec.Code == http.StatusBadRequest && !strings.Contains(rec.Body.String(), "wait=") {
				t.Errorf("refusal %q does not name the parameter", rec.Body.String())
			}
		})
	}
}

// TestAnswerWaitEndsWithTheClient: a client that gives up (the kubelet's probe timeout) ends
// the wait; the handler does not outlive it.
func TestAnswerWaitEndsWithTheClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/readyz?wait=1m", nil).WithContext(ctx)
	done := answerInBackground(answer(Check(func() error { return errors.New("never") })), req)
	cancel()
	if code := within(t, done, "the handler still waits after its client went"); code != http.StatusServiceUnavailable {
		t.Errorf("status %d after the client went, want 503", code)
	}
}

// TestFlagWakesAHeldProbe: a probe held on a Flag's failing answer is answered 200 as soon as
// the flag is set, without waiting for a poll or its deadline.
func TestFlagWakesAHeldProbe(t *testing.T) {
	notReady := errors.New("VirtualMachine default/vm is not Ready")
	flag := NewFlag(notReady)
	if err := flag.Check(); !errors.Is(err, notReady) || err.Error() != notReady.Error() {
		t.Fatalf("a new flag answers %v, want %v", err, notReady)
	}
	done := answerInBackground(answer(flag), httptest.NewRequest(http.MethodGet, "/readyz?wait=1m", nil))
	select {
	case code := <-done:
		t.Fatalf("answered %d before the flag was set, want the probe held", code)
	case <-time.After(200 * time.Millisecond): // held: only the flag can answer it now
	}
	if was := flag.Set(true); was {
		t.Error("Set(true) on a new flag says it was ready")
	}
	if code := within(t, done, "the held probe was not woken by the flag"); code != http.StatusOK {
		t.Errorf("held probe answered %d after the flag was set, want 200", code)
	}
	if was := flag.Set(false); !was {
		t.Error("Set(false) on a ready flag says it was not ready")
	}
	if flag.Check() == nil {
		t.Error("the flag still passes after Set(false)")
	}
}

// TestHeldAnswerWaitsForNews: once an endpoint has answered a held request, the next one is
// held while the answer stays the same, passing or failing, and answered the moment it
// changes: a ready pod's probe tells the kubelet at once that its VM went, and otherwise
// comes back once per wait.
func TestHeldAnswerWaitsForNews(t *testing.T) {
	flag := NewFlag(errors.New("VirtualMachine default/vm is not Ready"))
	flag.Set(true)
	h := answer(flag)
	probe := func() <-chan int {
		return answerInBackground(h, httptest.NewRequest(http.MethodGet, "/readyz?wait=1m", nil))
	}
	held := func(done <-chan int, what string) {
		t.Helper()
		select {
		case code := <-done:
			t.Fatalf("%s: answered %d at once, want it held", what, code)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if code := within(t, probe(), "the first answer was held"); code != http.StatusOK {
		t.Fatalf("first probe of a ready flag: %d, want 200 at once", code)
	}
	done := probe()
	held(done, "ready, as last answered")
	flag.Set(false)
	if code := within(t, done, "the held probe was not woken when the flag went unready"); code != http.StatusServiceUnavailable {
		t.Fatalf("held probe answered %d when the flag went unready, want 503", code)
	}
	done = probe()
	held(done, "unready, as last answered")
	flag.Set(true)
	if code := within(t, done, "the held probe was not woken when the flag went ready"); code != http.StatusOK {
		t.Fatalf("held probe answered %d when the flag went ready, want 200", code)
	}
	// A short wait with no news answers what is, and does not change the last answer.
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodGet, "/readyz?wait=300ms", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("no news within the wait: %d, want 200", rec.Code)
	}
	held(probe(), "still ready after a wait that ran out")
}

// TestServeEndsHeldProbes: shutting the server down answers the probes it holds at once
// instead of waiting for their ?wait= to run out.
func TestServeEndsHeldProbes(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- Serve(ctx, addr, NewFlag(errors.New("not ready")), Always) }()
	statusOf(t, "http://"+addr+"/healthz") // serving
	held := make(chan struct{})
	go func() {
		defer close(held)
		resp, err := http.Get("http://" + addr + "/readyz?wait=1m")
		if err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond) // the probe is held
	cancel()
	deadline := time.After(4 * time.Second) // below Serve's 5 s shutdown timeout
	select {
	case <-held:
	case <-deadline:
		t.Fatal("the held probe still waits after the server was shut down")
	}
	select {
	case <-served:
	case <-deadline:
		t.Fatal("Serve still runs after its context ended")
	}
}

// answerInBackground serves req with the handler and sends the status code.
func answerInBackground(h http.HandlerFunc, req *http.Request) <-chan int {
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, req)
		done <- rec.Code
	}()
	return done
}

// within is the status code done sends within 10 s; the test fails with stuck otherwise.
func within(t *testing.T, done <-chan int, stuck string) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal(stuck)
		return 0
	}
}

// TestAlwaysSleepsWhenHeld: a held /healthz?wait= of a component that is always alive sleeps
// until its wait ends; asking again every waitPoll would wake the process ten times a second.
func TestAlwaysSleepsWhenHeld(t *testing.T) {
	if changed, err := stateOf(Always); changed == nil || err != nil {
		t.Errorf("Always: change channel %v, answer %v; want a channel to sleep on and a pass", changed, err)
	}
}
