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
	addr := freeAddr(t)
	var ready, live atomic.Pointer[error]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Serve(ctx, addr, Check(func() error { return *ready.Load() }), Check(func() error { return *live.Load() }))
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

// TestServeProfilesOnlyWhenAsked: Go's profiles are served under /debug/pprof/ with
// --profiling only, since the health address has no authentication.
func TestServeProfilesOnlyWhenAsked(t *testing.T) {
	defer func(was bool) { Profiling = was }(Profiling)
	for _, tt := range []struct {
		profiling bool
		want      int
	}{
		{false, http.StatusNotFound},
		{true, http.StatusOK},
	} {
		Profiling = tt.profiling
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- Serve(ctx, addr, Always, Always) }()
		if got := statusOf(t, "http://"+addr+"/debug/pprof/heap"); got != tt.want {
			t.Errorf("GET /debug/pprof/heap with Profiling=%v = %d, want %d", tt.profiling, got, tt.want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve returned %v after shutdown", err)
		}
	}
}

// freeAddr is a loopback address with a port no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
