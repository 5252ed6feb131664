package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var ready, live atomic.Pointer[error]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Serve(ctx, addr, func() error { return *ready.Load() }, func() error { return *live.Load() })
	}()

	notSynced := errors.New("informers not synced")
	wedged := errors.New("a worker is wedged")

	tests := []struct {
		path        string
		ready, live error
		want        int
	}{
		{"/healthz", notSynced, nil, http.StatusOK},
		{"/healthz", nil, wedged, http.StatusServiceUnavailable},
		{"/readyz", notSynced, nil, http.StatusServiceUnavailable},
		{"/readyz", nil, wedged, http.StatusOK},
		{"/metrics", notSynced, wedged, http.StatusOK},
	}
	for _, tt := range tests {
		ready.Store(&tt.ready)
		live.Store(&tt.live)
		if got := statusOf(t, "http://"+addr+tt.path); got != tt.want {
			t.Errorf("GET %s (ready=%v, live=%v) = %d, want %d", tt.path, tt.ready, tt.live, got, tt.want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after shutdown", err)
	}
}

func statusOf(t *testing.T, url string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return resp.StatusCode
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetricsHandler: /metrics serves the component's collectors next to the legacy
// registry's metrics, and a collector that fails costs only its own metric.
func TestMetricsHandler(t *testing.T) {
	good := prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubevirt_test_gauge", Help: "A test gauge."})
	good.Set(3)
	bad := failingCollector{prometheus.NewDesc("kubevirt_test_failing", "Fails.", nil, nil)}
	tests := []struct {
		name       string
		collectors []prometheus.Collector
		want       []string
		notWant    []string
	}{
		{"legacy only", nil, []string{"go_goroutines "}, []string{"kubevirt_test_gauge"}},
		{"with a collector", []prometheus.Collector{good}, []string{"go_goroutines ", "kubevirt_test_gauge 3"}, nil},
		{"a failing collector", []prometheus.Collector{good, bad}, []string{"go_goroutines ", "kubevirt_test_gauge 3"}, []string{"kubevirt_test_failing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := metricsHandler(tt.collectors)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d:\n%s", rec.Code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("/metrics lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("/metrics has %q", w)
				}
			}
		})
	}
	if _, err := metricsHandler([]prometheus.Collector{good, good}); err == nil {
		t.Error("registering a collector twice: no error")
	}
}

// failingCollector reports an error instead of its metric.
type failingCollector struct{ desc *prometheus.Desc }

func (c failingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c failingCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(c.desc, errors.New("broken"))
}

// TestAnswerWait: ?wait= holds a failing check until it passes or the wait ends, answers a
// passing one at once, and a malformed or unbounded wait is refused by name.
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
		{"beyond MaxWait", "?wait=2m", []bool{true}, http.StatusBadRequest},
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
			answer(check)(rec, httptest.NewRequest(http.MethodGet, "/readyz"+tt.query, nil))
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
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		answer(func() error { return errors.New("never") })(rec, req)
		done <- rec.Code
	}()
	cancel()
	select {
	case code := <-done:
		if code != http.StatusServiceUnavailable {
			t.Errorf("status %d after the client went, want 503", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still waits after its client went")
	}
}
