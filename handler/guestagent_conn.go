package handler

import (
	"time"

	"github.com/digitalocean/go-libvirt"
	"k8s.io/apimachinery/pkg/types"
	"libvirt.org/go/libvirtxml"

	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/handler/guestagent"
)

// What the handler knows of a domain's guest agent lives with its launcher connection: libvirt
// says when the agent connects or goes, and the handler then reads its report once, off the
// sync workers. The guest runs the agent, so it decides how fast it answers and how often it
// reconnects: reads are one at a time per domain, at least agentReadInterval apart, a worker
// never waits for one, and the agent's comings and goings queue the instance (a status
// write) at most once per agentReadInterval.
var agentReadInterval = 5 * time.Second

// agentReadAttempts bounds the reads after a connect: a new agent may not answer at once.
const agentReadAttempts = 5

// agentState is a domain's guest agent as the handler knows it.
type agentState struct {
	known     bool // from an event or the live XML; until then nothing is reported
	connected bool
	report    *guestagent.Report
	reading   bool
	lastRead  time.Time
	// gen counts connects: a report read before the latest one is not kept.
	gen int
	// lastQueued is when an agent change last queued the instance; queueing says one is due.
	lastQueued time.Time
	queueing   bool
}

// AgentView is what a sync reports of the agent: nothing when unknown.
type AgentView struct {
	Known, Connected bool
	// Reading: a read of the report is under way.
	Reading bool
	Report  *guestagent.Report
}

// agentEvent records an agent connect or disconnect; a connect starts a read.
func (cc *connCache) agentEvent(lc *launcherConn, domainName string, state libvirt.ConnectDomainEventAgentLifecycleState) {
	lc.mu.Lock()
	lc.agent.known = true
	lc.agent.connected = state == libvirt.ConnectDomainEventAgentLifecycleStateConnected
	lc.agent.report = nil
	lc.agent.gen++
	lc.mu.Unlock()
	if state == libvirt.ConnectDomainEventAgentLifecycleStateConnected {
		cc.readAgent(lc, domainName)
		return
	}
	cc.enqueueAgent(lc)
}

// enqueueAgent queues the instance for a change of its agent, at most once per
// agentReadInterval: a guest that reconnects its agent in a loop costs the API a status write
// per interval, not one per event.
func (cc *connCache) enqueueAgent(lc *launcherConn) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.agent.queueing {
		return
	}
	wait := time.Until(lc.agent.lastQueued.Add(agentReadInterval))
	if wait <= 0 {
		lc.agent.lastQueued = time.Now()
		cc.enqueue(lc.key)
		return
	}
	lc.agent.queueing = true
	time.AfterFunc(wait, func() {
		lc.mu.Lock()
		lc.agent.queueing, lc.agent.lastQueued = false, time.Now()
		lc.mu.Unlock()
		cc.enqueue(lc.key)
	})
}

// agentSeen records the agent's state read from the live domain XML, unless an event said
// it already (events are newer); a connected agent's report is read.
func (cc *connCache) agentSeen(podUID types.UID, domainName string, connected bool) {
	lc := cc.conn(podUID)
	if lc == nil {
		return
	}
	lc.mu.Lock()
	known := lc.agent.known
	if !known {
		lc.agent.known, lc.agent.connected = true, connected
	}
	lc.mu.Unlock()
	if !known && connected {
		cc.readAgent(lc, domainName)
	}
}

// agentView is the pod's agent as known.
func (cc *connCache) agentView(podUID types.UID) AgentView {
	lc := cc.conn(podUID)
	if lc == nil {
		return AgentView{}
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return AgentView{Known: lc.agent.known, Connected: lc.agent.connected, Reading: lc.agent.reading, Report: lc.agent.report}
}

// readAgent reads the agent's report in the background unless a read runs already, and
// enqueues the instance once it has the report of the latest connect or gave up.
func (cc *connCache) readAgent(lc *launcherConn, domainName string) {
	lc.mu.Lock()
	if lc.agent.reading {
		lc.mu.Unlock()
		return
	}
	lc.agent.reading = true
	lc.mu.Unlock()
	go func() {
		defer func() {
			lc.mu.Lock()
			lc.agent.reading = false
			lc.mu.Unlock()
			cc.enqueueAgent(lc)
		}()
		for failures := 0; failures < agentReadAttempts; {
			lc.mu.Lock()
			done, gen := !lc.agent.connected || lc.agent.report != nil, lc.agent.gen
			wait := time.Until(lc.agent.lastRead.Add(agentReadInterval))
			lc.mu.Unlock()
			if done {
				return
			}
			select {
			case <-time.After(wait):
			case <-lc.lv.Disconnected():
				return
			}
			params, err := lc.lv.GuestInfo(domainName)
			lc.mu.Lock()
			lc.agent.lastRead = time.Now()
			if err == nil && gen == lc.agent.gen {
				r := guestagent.Parse(params)
				lc.agent.report = &r
			}
			lc.mu.Unlock()
			if err != nil {
				failures++
			}
		}
	}()
}

// agentConnected reads the agent channel's state from a live domain XML.
func agentConnected(d *libvirtxml.Domain) bool {
	if d.Devices == nil {
		return false
	}
	for _, ch := range d.Devices.Channels {
		if t := ch.Target; t != nil && t.VirtIO != nil && t.VirtIO.Name == domain.AgentChannel {
			return t.VirtIO.State == "connected"
		}
	}
	return false
}
