package network

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Without virt-handler's bridge the launcher gives up after its wait, saying what is missing.
func TestServeGuestNamesTheMissingBridge(t *testing.T) {
	cfg := Config{Hostname: "vm", ResolvConf: "/nonexistent", Wait: 150 * time.Millisecond, Poll: 20 * time.Millisecond}
	start := time.Now()
	_, err := ServeGuest(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "virt-handler did not set up the pod network (bridge k6t-br0)") {
		t.Fatalf("error %v, want one naming virt-handler and the bridge", err)
	}
	if waited := time.Since(start); waited < cfg.Wait || waited > 5*time.Second {
		t.Errorf("gave up after %s, want about %s", waited, cfg.Wait)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ServeGuest(ctx, cfg); err == nil || strings.Contains(err.Error(), "did not set up") {
		t.Errorf("cancelled wait: %v, want the cancellation", err)
	}
}
