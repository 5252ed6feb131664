package handler

import (
	"context"
	"sync"

	"github.com/digitalocean/go-libvirt"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// launcherConn is the handler's connection to one launcher pod's libvirtd, following the
// lifecycle events of that pod's domain.
type launcherConn struct {
	podUID types.UID
	key    string // the instance's namespace/name
	lv     Libvirt
	cancel context.CancelFunc

	mu      sync.Mutex
	lost    bool          // the event stream ended: libvirtd went away
	stopped *DomainStatus // how the domain last stopped, from its events
	devices *domainDevices
	agent   agentState
}

// Libvirt is the live connection; nil once it was lost.
func (lc *launcherConn) live() Libvirt {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.lost {
		return nil
	}
	select {
	case <-lc.lv.Disconnected():
		lc.lost = true
		return nil
	default:
		return lc.lv
	}
}

// connCache holds one connection per launcher pod of this node. Each instance key is synced by
// one worker at a time and a pod belongs to one instance, so a pod's entry is only ever
// created or removed by one goroutine at a time.
type connCache struct {
	dial    Dialer
	enqueue func(key string)

	mu    sync.Mutex
	conns map[types.UID]*launcherConn
}

func newConnCache(dial Dialer, enqueue func(string)) *connCache {
	return &connCache{dial: dial, enqueue: enqueue, conns: map[types.UID]*launcherConn{}}
}

// get returns the live connection to the pod's libvirtd, dialling (and subscribing to the
// domain's lifecycle events, which enqueue key) when there is none or it was lost.
func (cc *connCache) get(key string, podUID types.UID, domainName, privateDir string) (Libvirt, error) {
	cc.mu.Lock()
	old := cc.conns[podUID]
	cc.mu.Unlock()
	if old != nil {
		if lv := old.live(); lv != nil {
			return lv, nil
		}
	}
	lv, err := cc.dial(context.Background(), privateDir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	events, err := lv.LifecycleEvents(ctx)
	if err != nil {
		cancel()
		_ = lv.Close()
		return nil, err
	}
	lc := &launcherConn{podUID: podUID, key: key, lv: lv, cancel: cancel}
	if old != nil {
		old.cancel()
		lc.stopped = old.stopped
		go closeQuietly(old.lv)
	}
	cc.mu.Lock()
	cc.conns[podUID] = lc
	cc.mu.Unlock()
	go cc.follow(ctx, lc, domainName, events)
	klog.V(2).InfoS("connected to launcher libvirt", "vmi", key, "pod", podUID)
	return lv, nil
}

// follow records the domain's stops and enqueues its instance on each of its events, and once
// more when the stream ends because libvirtd went away.
func (cc *connCache) follow(ctx context.Context, lc *launcherConn, domainName string, events <-chan LifecycleEvent) {
	for ev := range events {
		if ev.Domain != domainName {
			continue
		}
		if ev.Agent != 0 {
			klog.V(3).InfoS("guest agent event", "vmi", lc.key, "state", ev.Agent)
			cc.agentEvent(lc, domainName, ev.Agent)
			continue
		}
		lc.mu.Lock()
		switch {
		case ev.Event == libvirt.DomainEventStarted:
			lc.stopped = nil
		case ev.Event == libvirt.DomainEventStopped || ev.Event == libvirt.DomainEventCrashed:
			st := stopFromEvent(ev)
			lc.stopped = &st
		}
		lc.mu.Unlock()
		klog.V(3).InfoS("domain event", "vmi", lc.key, "event", ev.Event, "detail", ev.Detail)
		cc.enqueue(lc.key)
	}
	if ctx.Err() != nil {
		return // closed on purpose
	}
	lc.mu.Lock()
	lc.lost = true
	lc.mu.Unlock()
	cc.enqueue(lc.key)
}

// stopFromEvent is the domain state a Stopped or Crashed event leaves behind.
func stopFromEvent(ev LifecycleEvent) DomainStatus {
	if ev.Event == libvirt.DomainEventCrashed {
		return DomainStatus{State: libvirt.DomainCrashed, Reason: ev.Detail}
	}
	reasons := map[libvirt.DomainEventStoppedDetailType]libvirt.DomainShutoffReason{
		libvirt.DomainEventStoppedShutdown:     libvirt.DomainShutoffShutdown,
		libvirt.DomainEventStoppedDestroyed:    libvirt.DomainShutoffDestroyed,
		libvirt.DomainEventStoppedCrashed:      libvirt.DomainShutoffCrashed,
		libvirt.DomainEventStoppedMigrated:     libvirt.DomainShutoffMigrated,
		libvirt.DomainEventStoppedSaved:        libvirt.DomainShutoffSaved,
		libvirt.DomainEventStoppedFailed:       libvirt.DomainShutoffFailed,
		libvirt.DomainEventStoppedFromSnapshot: libvirt.DomainShutoffFromSnapshot,
	}
	return DomainStatus{State: libvirt.DomainShutoff, Reason: int32(reasons[libvirt.DomainEventStoppedDetailType(ev.Detail)])}
}

// conn is the pod's connection, nil when there is none.
func (cc *connCache) conn(podUID types.UID) *launcherConn {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.conns[podUID]
}

// lastStop is how the pod's domain last stopped, as its events said, if they said so.
func (cc *connCache) lastStop(podUID types.UID) (DomainStatus, bool) {
	lc := cc.conn(podUID)
	if lc == nil {
		return DomainStatus{}, false
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.stopped == nil {
		return DomainStatus{}, false
	}
	return *lc.stopped, true
}

// devices returns the devices remembered for the pod's domain, reading them with read the
// first time.
func (cc *connCache) devices(podUID types.UID, read func() (*domainDevices, error)) (*domainDevices, error) {
	lc := cc.conn(podUID)
	if lc != nil {
		lc.mu.Lock()
		dev := lc.devices
		lc.mu.Unlock()
		if dev != nil {
			return dev, nil
		}
	}
	dev, err := read()
	if err != nil || lc == nil {
		return dev, err
	}
	lc.mu.Lock()
	lc.devices = dev
	lc.mu.Unlock()
	return dev, nil
}

// lookup is the pod's live connection, nil when there is none. Unlike get it never dials:
// only the instance's sync opens connections.
func (cc *connCache) lookup(podUID types.UID) Libvirt {
	lc := cc.conn(podUID)
	if lc == nil {
		return nil
	}
	return lc.live()
}

// forget closes and forgets the connections of key's pods other than keep ("" keeps none).
func (cc *connCache) forget(key string, keep types.UID) {
	cc.mu.Lock()
	var gone []*launcherConn
	for uid, lc := range cc.conns {
		if lc.key == key && uid != keep {
			gone = append(gone, lc)
			delete(cc.conns, uid)
		}
	}
	cc.mu.Unlock()
	for _, lc := range gone {
		lc.cancel()
		go closeQuietly(lc.lv)
		klog.V(2).InfoS("closed launcher connection", "vmi", key, "pod", lc.podUID)
	}
}

// closeAll closes every connection, when the handler stops.
func (cc *connCache) closeAll() {
	cc.mu.Lock()
	all := cc.conns
	cc.conns = map[types.UID]*launcherConn{}
	cc.mu.Unlock()
	var wg sync.WaitGroup
	for _, lc := range all {
		lc.cancel()
		wg.Go(func() { closeQuietly(lc.lv) })
	}
	wg.Wait()
}

// len is the number of cached connections.
func (cc *connCache) len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.conns)
}

func closeQuietly(lv Libvirt) {
	if err := lv.Close(); err != nil {
		klog.V(3).InfoS("closing a launcher connection", "err", err)
	}
}
