// Package health serves the /healthz and /readyz endpoints every component exposes to its
// kubelet probes, and /metrics for Prometheus: client-go's request, workqueue and leader
// election metrics and whatever the component registers in component-base's legacy registry,
// plus the component's own collectors (KubeVirt's kubevirt_* metrics, docs/metrics.md).
package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics, registered on import
	"k8s.io/klog/v2"
)

// Profiling adds Go's profiles under /debug/pprof/ (--profiling). Off by default: the health
// address has no authentication, and a profile costs the component CPU while it is taken.
var Profiling bool

// Probe is what an endpoint answers: Check is nil when it passes. A Check function is one; a
// Flag is one that also says when its answer changes.
type Probe interface{ Check() error }

// Check is a Probe asked anew each time: nil when the component is ready to do its work.
type Check func() error

// Check asks c.
func (c Check) Check() error { return c() }

// Serve answers /healthz while live passes, /readyz while ready passes and /metrics (the
// legacy registry and collectors), until ctx ends. It returns the listener's error, or nil
// after a clean shutdown.
func Serve(ctx context.Context, addr string, ready, live Probe, collectors ...prometheus.Collector) error {
	metrics, err := metricsHandler(collectors)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", answer(live))
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/readyz", answer(ready))
	if Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		// Requests end with ctx: a probe held by ?wait= must not hold the shutdown back.
		BaseContext: func(net.Listener) context.Context { return ctx }}
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

// answer serves a probe: 200 "ok", or 503 with the probe's error. With ?wait= the answer is
// held while it is the one the endpoint last gave (wait.go).
func answer(p Probe) http.HandlerFunc {
	var last lastAnswer
	return func(w http.ResponseWriter, r *http.Request) {
		wait, err := waitParam(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if wait > 0 {
			err = last.hold(r.Context(), p, wait)
		} else {
			err = p.Check()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

// Always is a Probe for components that are ready as soon as they serve. A Flag that never
// changes: a held request sleeps until its wait ends instead of asking again and again.
var Always Probe = alwaysReady()

func alwaysReady() *Flag {
	f := NewFlag(nil)
	f.Set(true)
	return f
}
