// Package health serves the /healthz and /readyz endpoints every component exposes to its
// kubelet probes, and /metrics for Prometheus: client-go's request, workqueue and leader
// election metrics and whatever the component registers in component-base's legacy registry,
// plus the component's own collectors (KubeVirt's kubevirt_* metrics, docs/metrics.md).
package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics, registered on import
	"k8s.io/klog/v2"
)

// Check reports nil when the component is ready to do its work.
type Check func() error

// Serve answers /healthz while live() is nil, /readyz while ready() is nil and /metrics (the
// legacy registry and collectors), until ctx ends. It returns the listener's error, or nil
// after a clean shutdown.
func Serve(ctx context.Context, addr string, ready, live Check, collectors ...prometheus.Collector) error {
	metrics, err := metricsHandler(collectors)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", answer(live))
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/readyz", answer(ready))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	klog.InfoS("serving health endpoints", "addr", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// metricsHandler serves the legacy registry and the collectors together. The collectors get a
// registry of their own rather than the legacy one, whose stability framework wants its own
// metric types; one family that fails to collect leaves the others served.
func metricsHandler(collectors []prometheus.Collector) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	gatherers := prometheus.Gatherers{legacyregistry.DefaultGatherer, reg}
	return promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      klogErrors{},
	}), nil
}

// klogErrors logs the errors of a scrape that went on without some metrics.
type klogErrors struct{}

func (klogErrors) Println(v ...any) { klog.ErrorS(nil, "serving /metrics", "err", fmt.Sprint(v...)) }

// MaxWait bounds the ?wait= of a check.
const MaxWait = time.Minute

// waitPoll is how often a waiting check is asked again; the checks are cheap (an atomic load).
const waitPoll = 100 * time.Millisecond

// answer serves a check: 200 "ok", or 503 with the check's error.
//
// With ?wait=DURATION (at most MaxWait) a failing check is held until it passes, the duration
// elapses or the client goes, and answered then; a passing one is answered at once. A kubelet
// probing /readyz?wait=20s, with a timeoutSeconds above 20, so fails one probe (one Unhealthy
// event, an API write) per 20 s while the component waits for its work instead of one per
// period, and still sees it ready within a moment. Passes are not held: a probe that started
// just after a change would hold the new answer while the kubelet still believes the old one.
func answer(check Check) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hold, err := waitParam(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		err = check()
		if err != nil && hold > 0 {
			_ = wait.PollUntilContextTimeout(r.Context(), waitPoll, hold, false, func(context.Context) (bool, error) {
				err = check()
				return err == nil, nil
			})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
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
	if d < 0 || d > MaxWait {
		return 0, fmt.Errorf("wait=%q: want a duration from 0 to %s", v, MaxWait)
	}
	return d, nil
}

// Always is a Check for components that are ready as soon as they serve.
func Always() error { return nil }
