package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
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
