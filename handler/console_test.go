package handler

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// withCacheLag sets how long requests wait for the instance cache, for one test.
func withCacheLag(t *testing.T, d time.Duration) {
	old := cacheLag
	cacheLag = d
	t.Cleanup(func() { cacheLag = old })
}

// TestLocalInstanceWaitsForTheCache: an instance virt-api read as on this node but not yet in
// the handler's cache is waited for; one that never shows up here is a 404.
func TestLocalInstanceWaitsForTheCache(t *testing.T) {
	withCacheLag(t, 500*time.Millisecond)
	for _, tc := range []struct {
		name    string
		arrives bool
		node    string
	}{
		{name: "scheduled here, cached late", arrives: true, node: testNode},
		{name: "never cached", arrives: false},
		{name: "cached on another node", arrives: true, node: "node-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := runningInstance()
			f := newFixture(t, vmi)
			_ = f.vmis.Delete(vmi)
			if tc.arrives {
				late := vmi.DeepCopy()
				late.Status.NodeName = tc.node
				time.AfterFunc(200*time.Millisecond, func() { _ = f.vmis.Add(late) })
			}
			got, err := f.c.localInstance(t.Context(), vmi.Namespace, vmi.Name)
			var refused *streamError
			if local := tc.arrives && tc.node == testNode; local != (err == nil && got != nil) ||
				!local && (!errors.As(err, &refused) || refused.status != http.StatusNotFound) {
				t.Fatalf("got %v, %v; want the instance: %v, else a 404", got, err, local)
			}
		})
	}
}

// TestLocalInstanceEndsWithTheRequest: a client that leaves ends the wait for the cache, well
// before the cache's own hour, with the 404 of an instance not here.
func TestLocalInstanceEndsWithTheRequest(t *testing.T) {
	withCacheLag(t, time.Hour)
	vmi := runningInstance()
	f := newFixture(t, vmi)
	_ = f.vmis.Delete(vmi)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := f.c.localInstance(ctx, vmi.Namespace, vmi.Name)
		done <- err
	}()
	select {
	case err := <-done:
		if errorStatus(err) != http.StatusNotFound {
			t.Fatalf("got %v after the request ended, want a 404", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting for the cache 30 s after the request ended")
	}
}
