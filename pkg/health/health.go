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

// Serve answers /healthz while the process runs, /readyz while ready() is nil and /metrics, until ctx
// ends. It returns the listener's error, or nil after a clean shutdown.
func Serve(ctx context.Context, addr string, ready Check) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
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

// Always is a Check for components that are ready as soon as they serve.
func Always() error { return nil }
