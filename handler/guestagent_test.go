package handler

import (
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

const testMAC = "52:54:00:aa:bb:cc"

// agentAnswer is what the testguest's agent tells libvirt.
func agentAnswer() []libvirt.TypedParam {
	p := func(k string, v any) libvirt.TypedParam {
		return libvirt.TypedParam{Field: k, Value: libvirt.TypedParamValue{I: v}}
	}
	return []libvirt.TypedParam{p("hostname", "web"), p("os.id", "vmctl-testguest"), p("os.pretty-name", "vmctl testguest (busybox)"),
		p("if.count", uint32(1)), p("if.0.name", "eth0"), p("if.0.hwaddr", "52:54:00:AA:BB:CC")}
}

// runningWithAgentChannel is a Running instance whose domain runs with the agent's channel in
// the given state ("" for none yet).
func runningWithAgentChannel(t *testing.T, state string) *fixture {
	vmi := newInstance()
	vmi.Status.Phase = v1.Running
	vmi.Spec.Domain.Devices.Interfaces[0].MacAddress = testMAC
	f := newFixture(t, vmi, newPod(vmi))
	f.lv.set(domName, libvirt.DomainRunning, 1)
	f.lv.domains[domName].xml = `<domain><name>` + domName + `</name><devices><channel type="unix">` +
		`<target type="virtio" name="org.qemu.guest_agent.0" state="` + state + `"/></channel></devices></domain>`
	f.lv.guest = agentAnswer()
	return f
}

func agentConnectedCondition(vmi *v1.VirtualMachineInstance) bool {
	c := condition(vmi, v1.VirtualMachineInstanceAgentConnected)
	return c != nil && c.Status == corev1.ConditionTrue
}

// fastAgentReads lets the test see reads and queueing without the production pace.
func fastAgentReads(t *testing.T) {
	agentReadInterval = 10 * time.Millisecond
	t.Cleanup(func() { agentReadInterval = 5 * time.Second })
}

func TestTheGuestAgentIsReported(t *testing.T) {
	fastAgentReads(t)
	f := runningWithAgentChannel(t, "")
	f.sync()
	f.observe()
	got := f.stored()
	if agentConnectedCondition(got) || got.Status.GuestOSInfo.ID != "" {
		t.Fatalf("before the agent connects: conditions %+v, guestOSInfo %+v", got.Status.Conditions, got.Status.GuestOSInfo)
	}
	if i := got.Status.Interfaces[0]; i.InfoSource != v1.InfoSourceDomain || i.InterfaceName != "" {
		t.Errorf("interface before the agent = %+v", i)
	}

	// The guest's agent opens its port: the handler reads its report, then syncs once.
	f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateConnected}
	if key := f.nextKey(); key != "ns/web" {
		t.Fatalf("queued %q", key)
	}
	if w := f.sync(); len(w) != 1 {
		t.Errorf("writes for the agent = %v, want one", w)
	}
	f.observe()
	got = f.stored()
	if !agentConnectedCondition(got) {
		t.Errorf("conditions = %+v, want AgentConnected True", got.Status.Conditions)
	}
	if got.Status.GuestOSInfo.ID != "vmctl-testguest" || got.Status.GuestOSInfo.PrettyName != "vmctl testguest (busybox)" {
		t.Errorf("guestOSInfo = %+v", got.Status.GuestOSInfo)
	}
	if i := got.Status.Interfaces[0]; i.InfoSource != v1.InfoSourceDomainGuestAgent || i.InterfaceName != "eth0" {
		t.Errorf("interface = %+v", i)
	}
	if w := f.sync(); len(w) != 0 {
		t.Errorf("a sync with nothing new wrote %v", w)
	}

	// The agent goes: the condition goes, the last report of the OS stays.
	f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateDisconnected}
	f.nextKey()
	f.sync()
	got = f.stored()
	if agentConnectedCondition(got) || got.Status.GuestOSInfo.ID != "vmctl-testguest" {
		t.Errorf("after the agent left: conditions %+v, guestOSInfo %+v", got.Status.Conditions, got.Status.GuestOSInfo)
	}
	if i := got.Status.Interfaces[0]; i.InfoSource != v1.InfoSourceDomain || i.InterfaceName != "" {
		t.Errorf("interface after the agent left = %+v", i)
	}
}

// A handler that connects to a domain whose agent is already connected (it restarted) learns
// it from the domain's XML.
func TestAnAgentConnectedBeforeTheHandlerIsReported(t *testing.T) {
	fastAgentReads(t)
	f := runningWithAgentChannel(t, "connected")
	f.sync()
	f.observe()
	f.nextKey() // the report was read
	f.sync()
	if got := f.stored(); !agentConnectedCondition(got) || got.Status.GuestOSInfo.ID != "vmctl-testguest" {
		t.Errorf("conditions %+v, guestOSInfo %+v", got.Status.Conditions, got.Status.GuestOSInfo)
	}
}

// A guest whose agent comes and goes in a loop queues its instance once per interval.
func TestAnAgentInALoopQueuesItsInstanceOncePerInterval(t *testing.T) {
	f := runningWithAgentChannel(t, "")
	f.sync()
	f.observe()
	for range 10 {
		f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateConnected}
		f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateDisconnected}
	}
	f.nextKey()
	time.Sleep(100 * time.Millisecond)
	if n := f.c.queue.Len(); n != 0 {
		t.Errorf("%d more keys queued within the interval", n)
	}
	f.lv.mu.Lock()
	defer f.lv.mu.Unlock()
	if f.lv.guestN > 1 {
		t.Errorf("%d reads within the interval, want at most one", f.lv.guestN)
	}
}

// An agent that connects but never answers is connected with nothing to say, after a bounded
// number of reads.
func TestAnAgentThatDoesNotAnswer(t *testing.T) {
	f := runningWithAgentChannel(t, "")
	f.lv.guestErr = libvirt.Error{Code: uint32(libvirt.ErrAgentUnresponsive), Message: "Guest agent is not responding"}
	f.sync()
	f.observe()
	f.lv.events <- LifecycleEvent{Domain: domName, Agent: libvirt.ConnectDomainEventAgentLifecycleStateConnected}
	// The first read fails at once; the next waits agentReadInterval, so the view is "reading".
	waitFor(t, func() bool { f.lv.mu.Lock(); defer f.lv.mu.Unlock(); return f.lv.guestN > 0 })
	f.sync()
	if got := f.stored(); agentConnectedCondition(got) {
		t.Errorf("AgentConnected while its first report is awaited: %+v", got.Status.Conditions)
	}
	if v := f.c.conns.agentView(testPodUID); !v.Connected || !v.Reading || v.Report != nil {
		t.Errorf("view = %+v", v)
	}
}

// waitFor polls cond for at most a second.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
