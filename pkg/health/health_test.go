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
	var ready atomic.Pointer[error]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Serve(ctx, addr, func() error { return *ready.Load() }) }()

	notSynced := errors.New("informers not synced")

	tests := []struct {
		path  string
		ready error
		want  int
	}{
		{"/healthz", notSynced, http.StatusOK},
		{"/readyz", notSynced, http.StatusServiceUnavailable},
		{"/readyz", nil, http.StatusOK},
		{"/metrics", notSynced, http.StatusOK},
	}
	for _, tt := range tests {
		ready.Store(&tt.ready)
		if got := statusOf(t, "http://"+addr+tt.path); got != tt.want {
			t.Errorf("GET %s (ready=%v) = %d, want %d", tt.path, tt.ready, got, tt.want)
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
