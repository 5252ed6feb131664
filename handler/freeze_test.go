package handler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// freezeFixture is a Running instance whose guest agent is connected.
func freezeFixture(t *testing.T) (*fixture, *StreamServer) {
	withCacheLag(t, 0)
	fastAgentReads(t)
	f := runningWithAgentChannel(t, "connected")
	return f, &StreamServer{Controller: f.c}
}

func put(s *StreamServer, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.routes().ServeHTTP(rec, httptest.NewRequest(http.MethodPut, path, nil))
	return rec
}

// syncedFreezeStatus syncs and returns the status.fsFreezeStatus written.
func (f *fixture) syncedFreezeStatus() string {
	f.sync()
	f.observe()
	return f.stored().Status.FSFreezeStatus
}

// TestFreezeAndUnfreeze: what virt-api's PUT freeze and unfreeze do through the agent, and the
// status the next sync writes.
func TestFreezeAndUnfreeze(t *testing.T) {
	f, s := freezeFixture(t)
	freeze := handlerapi.FreezePath("ns", "web", time.Hour)
	if rec := put(s, freeze); rec.Code != http.StatusOK {
		t.Fatalf("freeze: %d %s", rec.Code, rec.Body)
	}
	if got := f.syncedFreezeStatus(); got != v1.FSFrozen {
		t.Fatalf("fsFreezeStatus %q after the freeze, want frozen", got)
	}
	// A second freeze moves the deadline only: the agent refuses to freeze twice.
	if rec := put(s, freeze); rec.Code != http.StatusOK {
		t.Fatalf("second freeze: %d %s", rec.Code, rec.Body)
	}
	if rec := put(s, handlerapi.LifecyclePath("ns", "web", handlerapi.Unfreeze)); rec.Code != http.StatusOK {
		t.Fatalf("unfreeze: %d %s", rec.Code, rec.Body)
	}
	if ops := strings.Join(f.lv.ops, ","); ops != "freeze ns_web,thaw ns_web" {
		t.Errorf("agent calls %q", ops)
	}
	if got := f.syncedFreezeStatus(); got != "" {
		t.Fatalf("fsFreezeStatus %q after the unfreeze, want none", got)
	}
	// An unfreeze of a guest not known frozen still reaches the agent: another process may
	// have frozen it.
	if rec := put(s, handlerapi.LifecyclePath("ns", "web", handlerapi.Unfreeze)); rec.Code != http.StatusOK || len(f.lv.ops) != 3 {
		t.Fatalf("unfreeze again: %d %s, calls %v", rec.Code, rec.Body, f.lv.ops)
	}
}

func TestFreezeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		path  string
		setup func(*fixture)
		code  int
		says  string
	}{
		{name: "no unfreeze timeout", path: handlerapi.LifecyclePath("ns", "web", handlerapi.Freeze), code: 400, says: "unfreeze timeout"},
		{name: "a negative unfreeze timeout", path: handlerapi.FreezePath("ns", "web", -time.Second), code: 400, says: "unfreeze timeout"},
		{name: "a paused guest", path: handlerapi.FreezePath("ns", "web", time.Minute), setup: func(f *fixture) {
			f.lv.set(domName, libvirt.DomainPaused, int32(libvirt.DomainPausedUser))
		}, code: 409, says: "paused"},
		{name: "an agent that does not answer", path: handlerapi.FreezePath("ns", "web", time.Minute), setup: func(f *fixture) {
			f.lv.guestErr = libvirt.Error{Code: uint32(libvirt.ErrAgentUnresponsive), Message: "QEMU guest agent is not connected"}
		}, code: 409, says: "not connected"},
		{name: "unfreeze with an agent that does not answer", path: handlerapi.LifecyclePath("ns", "web", handlerapi.Unfreeze), setup: func(f *fixture) {
			f.lv.guestErr = libvirt.Error{Code: uint32(libvirt.ErrAgentCommandTimeout), Message: "timed out"}
		}, code: 409, says: "does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, s := freezeFixture(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			if rec := put(s, tc.path); rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %q, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if got := f.syncedFreezeStatus(); got != "" {
				t.Errorf("fsFreezeStatus %q after a refused request", got)
			}
		})
	}
}

// TestTheGuestIsThawedAfterItsUnfreezeTimeout: a backup tool that never unfreezes does not
// leave the guest frozen; the thaw is reported in an event and the next status.
func TestTheGuestIsThawedAfterItsUnfreezeTimeout(t *testing.T) {
	f, s := freezeFixture(t)
	if rec := put(s, handlerapi.FreezePath("ns", "web", 50*time.Millisecond)); rec.Code != http.StatusOK {
		t.Fatalf("freeze: %d %s", rec.Code, rec.Body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.lv.opsSeen() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ops := strings.Join(f.lv.opsList(), ","); ops != "freeze ns_web,thaw ns_web" {
		t.Fatalf("agent calls %q, want a freeze then a thaw", ops)
	}
	for frozen, _ := f.c.freezes.state("ns/web", testPodUID); frozen && time.Now().Before(deadline); frozen, _ = f.c.freezes.state("ns/web", testPodUID) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.syncedFreezeStatus(); got != "" {
		t.Fatalf("fsFreezeStatus %q after the timeout", got)
	}
	if ev := strings.Join(f.events(), "\n"); !strings.Contains(ev, ReasonUnfrozenByTimeout) {
		t.Errorf("events %q, want %s", ev, ReasonUnfrozenByTimeout)
	}
}

// TestAFreezeOutlivesTheHandler: a handler that finds an instance frozen that it did not freeze
// (it restarted) keeps reporting it frozen and thaws it later; an agent that goes (the guest
// rebooted) ends the freeze.
func TestAFreezeOutlivesTheHandler(t *testing.T) {
	f, _ := freezeFixture(t)
	vmi := f.stored()
	vmi.Status.FSFreezeStatus = v1.FSFrozen
	if err := f.vmis.Update(vmi); err != nil {
		t.Fatal(err)
	}
	if got := f.syncedFreezeStatus(); got != v1.FSFrozen {
		t.Fatalf("fsFreezeStatus %q, want the frozen guest kept frozen", got)
	}
	if frozen, _ := f.c.freezes.state("ns/web", testPodUID); !frozen {
		t.Fatal("the freeze was not taken over: nothing will thaw the guest")
	}
	f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateDisconnected}
	for deadline := time.Now().Add(10 * time.Second); f.c.conns.agentView(testPodUID).Connected && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := f.syncedFreezeStatus(); got != "" {
		t.Fatalf("fsFreezeStatus %q once the agent went", got)
	}
}
