package handler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestLetsGo(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*fixture)
	}{
		"instance deleted from the API": {func(f *fixture) { _ = f.vmis.Delete(newInstance()) }},
		"instance being deleted": {func(f *fixture) {
			vmi := f.stored()
			vmi.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			_ = f.vmis.Update(vmi)
		}},
		"launcher pod gone": {func(f *fixture) { _ = f.pods.Delete(newPod(newInstance())) }},
	} {
		t.Run(name, func(t *testing.T) {
			vmi := newInstance()
			f := newFixture(t, vmi, newPod(vmi)).withOverlay()
			f.sync()
			f.observe()
			if f.c.conns.len() != 1 {
				t.Fatalf("%d connections after the start", f.c.conns.len())
			}
			// The domain is killed, as a VMI deletion does through the launcher.
			f.lv.set(domName, libvirt.DomainShutoff, int32(libvirt.DomainShutoffDestroyed))
			tc.mutate(f)
			if w := f.sync(); len(w) != 0 {
				t.Errorf("writes = %v", w)
			}
			if f.c.conns.len() != 0 {
				t.Errorf("%d connections left", f.c.conns.len())
			}
			deadline := time.Now().Add(time.Second)
			for !f.lv.isClosed() && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if !f.lv.isClosed() {
				t.Error("connection not closed")
			}
		})
	}
}

func TestEventsEnqueueAndOutliveTheLauncher(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	f.sync()
	f.observe()
	for f.c.queue.Len() > 0 {
		key, _ := f.c.queue.Get()
		f.c.queue.Done(key)
	}

	// The guest powers off; the launcher exits and takes libvirtd with it.
	f.lv.events <- LifecycleEvent{Domain: domName, Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedShutdown)}
	f.waitForLastStop()
	if key := f.nextKey(); key != "ns/web" {
		t.Fatalf("the event queued %q", key)
	}
	close(f.lv.gone)
	if key := f.nextKey(); key != "ns/web" {
		t.Fatalf("the lost connection queued %q", key)
	}
	pod := newPod(vmi)
	pod.Status.Phase = corev1.PodSucceeded
	_ = f.pods.Update(pod)
	f.notReady = true
	f.sync()
	if got := f.stored(); got.Status.Phase != v1.Succeeded || got.Status.Reason != ReasonGuestShutdown {
		t.Errorf("phase, reason = %s, %q; want Succeeded, %s", got.Status.Phase, got.Status.Reason, ReasonGuestShutdown)
	}
}

func (f *fakeLibvirt) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func TestConnectionLostMidSyncIsNoFailure(t *testing.T) {
	vmi := newInstance()
	vmi.Status.Phase = v1.Running
	f := newFixture(t, vmi, newPod(vmi))
	f.lv.set(domName, libvirt.DomainRunning, 1)
	f.sync()
	f.observe()
	// The guest shut down and libvirtd is gone before the handler asks again.
	f.lv.events <- LifecycleEvent{Domain: domName, Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedShutdown)}
	f.waitForLastStop()
	f.lv.mu.Lock()
	delete(f.lv.domains, domName)
	f.lv.stateErr = libvirt.ErrInterrupted
	f.lv.mu.Unlock()
	f.sync()
	if ev := f.events(); slices.ContainsFunc(ev, func(e string) bool { return strings.Contains(e, ReasonSyncFailed) }) {
		t.Errorf("events = %q", ev)
	}
	if got := f.stored(); got.Status.Phase != v1.Succeeded || condition(got, v1.VirtualMachineInstanceSynchronized) != nil {
		t.Errorf("phase %s, conditions %+v; want Succeeded from the last event", got.Status.Phase, got.Status.Conditions)
	}
}

// waitForLastStop waits until the connection recorded a stop event.
func (f *fixture) waitForLastStop() {
	f.t.Helper()
	deadline := time.Now().Add(time.Second)
	for _, ok := f.c.conns.lastStop(testPodUID); !ok; _, ok = f.c.conns.lastStop(testPodUID) {
		if time.Now().After(deadline) {
			f.t.Fatal("no stop recorded")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// nextKey waits for the next queued key (at most a second) and marks it done.
func (f *fixture) nextKey() string {
	f.t.Helper()
	deadline := time.Now().Add(time.Second)
	for f.c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			f.t.Fatal("nothing queued")
		}
		time.Sleep(2 * time.Millisecond)
	}
	key, _ := f.c.queue.Get()
	f.c.queue.Done(key)
	return key
}
