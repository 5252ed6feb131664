// Package health serves the /healthz and /readyz endpoints every component exposes to its
// kubelet probes, and /metrics for Prometheus: client-go's request, workqueue and leader
// election metrics and whatever the component registers in component-base's legacy registry.
package health

import (
	"context"
	"errors"
	"net/http"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics, registered on import
	"k8s.io/klog/v2"
)

// Check reports nil when the component is ready to do its work.
type Check func() error

// Serve answers /healthz while live() is nil, /readyz while ready() is nil and /metrics, until
// ctx ends. It returns the listener's error, or nil after a clean shutdown.
func Serve(ctx context.Context, addr string, ready, live Check) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", answer(live))
	mux.Handle("/metrics", legacyregistry.Handler())
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

// answer serves a check: 200 "ok", or 503 with the check's error.
func answer(check Check) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if err := check(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

// Always is a Check for components that are ready as soon as they serve.
func Always() error { return nil }
