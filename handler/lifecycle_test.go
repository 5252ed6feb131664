package handler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

func TestLifecycleRefusal(t *testing.T) {
	running := DomainStatus{State: libvirt.DomainRunning, Reason: int32(libvirt.DomainRunningBooted)}
	paused := DomainStatus{State: libvirt.DomainPaused, Reason: int32(libvirt.DomainPausedUser)}
	ioError := DomainStatus{State: libvirt.DomainPaused, Reason: int32(libvirt.DomainPausedIoerror)}
	blocked := DomainStatus{State: libvirt.DomainBlocked}
	shuttingDown := DomainStatus{State: libvirt.DomainShutdown}
	shutoff := DomainStatus{State: libvirt.DomainShutoff, Reason: int32(libvirt.DomainShutoffShutdown)}
	suspended := DomainStatus{State: libvirt.DomainPmsuspended}
	for _, tc := range []struct {
		op   handlerapi.Operation
		st   DomainStatus
		want string // a word of the refusal; "" accepts
	}{
		{handlerapi.Pause, running, ""},
		{handlerapi.Pause, blocked, ""},
		{handlerapi.Pause, paused, "already paused"},
		{handlerapi.Pause, shuttingDown, "shutting down"},
		{handlerapi.Pause, shutoff, "not running"},
		{handlerapi.Pause, suspended, "suspended"},
		{handlerapi.Unpause, paused, ""},
		{handlerapi.Unpause, ioError, ""},
		{handlerapi.Unpause, running, "not paused"},
		{handlerapi.Unpause, shutoff, "not running"},
		{handlerapi.SoftReboot, running, ""},
		{handlerapi.SoftReboot, paused, "unpause it first"},
		{handlerapi.SoftReboot, shuttingDown, "shutting down"},
		{handlerapi.SoftReboot, shutoff, "not running"},
	} {
		got := lifecycleRefusal(tc.op, tc.st)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s of %+v: %q, want a refusal saying %q", tc.op, tc.st, got, tc.want)
		}
	}
}

// TestLifecycleOperations: what virt-api's PUT on the stream server does to the domain and
// answers, and the status the next sync writes.
func TestLifecycleOperations(t *testing.T) {
	withCacheLag(t, 0)
	pausedByUser := DomainStatus{State: libvirt.DomainPaused, Reason: int32(libvirt.DomainPausedUser)}
	running := DomainStatus{State: libvirt.DomainRunning, Reason: int32(libvirt.DomainRunningBooted)}
	for _, tc := range []struct {
		name      string
		op        handlerapi.Operation
		method    string
		lookup    string
		vmi       func() *v1.VirtualMachineInstance
		pod       func(*corev1.Pod)
		domain    DomainStatus
		setup     func(*fixture)
		code      int
		says      string
		wantOp    string // the libvirt call made, "" for none
		wantState libvirt.DomainState
		paused    bool // the Paused condition after the next sync
	}{
		{name: "pause", op: handlerapi.Pause, domain: running, code: 200, wantOp: "suspend ns_web", wantState: libvirt.DomainPaused, paused: true},
		{name: "pause a paused guest", op: handlerapi.Pause, domain: pausedByUser, code: 409, says: "already paused", wantState: libvirt.DomainPaused, paused: true},
		{name: "unpause", op: handlerapi.Unpause, domain: pausedByUser, code: 200, wantOp: "resume ns_web", wantState: libvirt.DomainRunning},
		{name: "unpause a running guest", op: handlerapi.Unpause, domain: running, code: 409, says: "not paused", wantState: libvirt.DomainRunning},
		{name: "soft reboot", op: handlerapi.SoftReboot, domain: running, code: 200, wantOp: "reboot ns_web", wantState: libvirt.DomainRunning},
		{name: "soft reboot a paused guest", op: handlerapi.SoftReboot, domain: pausedByUser, code: 409, says: "unpause it first", wantState: libvirt.DomainPaused, paused: true},
		{name: "GET is not an operation", op: handlerapi.Pause, method: http.MethodGet, domain: running, code: 405, wantState: libvirt.DomainRunning},
		{name: "unknown instance", op: handlerapi.Pause, lookup: "other", domain: running, code: 404, wantState: libvirt.DomainRunning},
		{name: "another node's instance", op: handlerapi.Pause, vmi: func() *v1.VirtualMachineInstance {
			vmi := runningInstance()
			vmi.Status.NodeName = "node-b"
			return vmi
		}, domain: running, code: 404, wantState: libvirt.DomainRunning},
		{name: "scheduled, not running", op: handlerapi.Pause, vmi: newInstance, domain: running, code: 409, says: "not Running", wantState: libvirt.DomainRunning},
		{name: "launcher pod ended", op: handlerapi.Pause, pod: func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, domain: running, code: 409, says: "launcher pod", wantState: libvirt.DomainRunning},
		{name: "libvirt not listening", op: handlerapi.Pause, domain: running, setup: func(f *fixture) { f.notReady = true }, code: 503, wantState: libvirt.DomainRunning},
		{name: "launcher in backoff", op: handlerapi.Unpause, domain: pausedByUser, setup: func(f *fixture) { f.c.gate.trip("ns/web") }, code: 503, says: "try again", wantState: libvirt.DomainPaused, paused: true},
		{name: "libvirt fails the call", op: handlerapi.Pause, domain: running, setup: func(f *fixture) { f.lv.opErr = errLauncherUnresponsive }, code: 503, wantOp: "suspend ns_web", wantState: libvirt.DomainRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := runningInstance()
			if tc.vmi != nil {
				vmi = tc.vmi()
			}
			pod := newPod(vmi)
			if tc.pod != nil {
				tc.pod(pod)
			}
			f := newFixture(t, vmi, pod)
			f.lv.set(domName, tc.domain.State, tc.domain.Reason)
			if tc.setup != nil {
				tc.setup(f)
			}
			method, lookup := http.MethodPut, "web"
			if tc.method != "" {
				method = tc.method
			}
			if tc.lookup != "" {
				lookup = tc.lookup
			}
			rec := httptest.NewRecorder()
			s := &StreamServer{Controller: f.c}
			s.routes().ServeHTTP(rec, httptest.NewRequest(method, handlerapi.LifecyclePath("ns", lookup, tc.op), nil))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %q, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if ops := strings.Join(f.lv.ops, ","); ops != tc.wantOp {
				t.Errorf("libvirt calls %q, want %q", ops, tc.wantOp)
			}
			if st, _ := f.lv.DomainState(domName); st.State != tc.wantState {
				t.Errorf("domain state %d, want %d", st.State, tc.wantState)
			}
			if vmi.Status.Phase != v1.Running || vmi.Status.NodeName != testNode || tc.setup != nil {
				return
			}
			f.sync()
			got := f.stored()
			if c := condition(got, v1.VirtualMachineInstancePaused); (c != nil) != tc.paused {
				t.Errorf("Paused condition %+v after the sync, want %v", c, tc.paused)
			}
			if got.Status.Phase != v1.Running {
				t.Errorf("phase %s, want Running", got.Status.Phase)
			}
		})
	}
}

// TestOneLifecycleOperationPerInstance: while an operation on an instance runs, another on it
// is refused at once, not queued; the instance is free again afterwards.
func TestOneLifecycleOperationPerInstance(t *testing.T) {
	vmi := runningInstance()
	f := newFixture(t, vmi, newPod(vmi))
	f.lv.set(domName, libvirt.DomainRunning, int32(libvirt.DomainRunningBooted))
	s := &StreamServer{Controller: f.c}
	put := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.routes().ServeHTTP(rec, httptest.NewRequest(http.MethodPut, handlerapi.LifecyclePath("ns", "web", handlerapi.Pause), nil))
		return rec
	}
	if !s.begin("ns/web") {
		t.Fatal("a free instance is busy")
	}
	if rec := put(); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "in progress") {
		t.Fatalf("while busy: %d %s", rec.Code, rec.Body)
	}
	if len(f.lv.ops) != 0 {
		t.Fatalf("libvirt called while busy: %v", f.lv.ops)
	}
	s.end("ns/web")
	if rec := put(); rec.Code != http.StatusOK {
		t.Fatalf("once free: %d %s", rec.Code, rec.Body)
	}
}

// TestAPausedInstanceStaysPaused: the handler's syncs report a user's pause and never resume
// the domain (nor start or define it again), however often they run.
func TestAPausedInstanceStaysPaused(t *testing.T) {
	vmi := runningInstance()
	f := newFixture(t, vmi, newPod(vmi))
	f.lv.set(domName, libvirt.DomainPaused, int32(libvirt.DomainPausedUser))
	for range 3 {
		f.sync()
		f.observe()
		f.clock.SetTime(f.clock.Now().Add(time.Minute))
	}
	if st, _ := f.lv.DomainState(domName); st.State != libvirt.DomainPaused || len(f.lv.ops) != 0 {
		t.Fatalf("domain %+v, calls %v: the sync acted on a paused domain", st, f.lv.ops)
	}
	if d, s := f.lv.counts(); d+s != 0 {
		t.Fatalf("%d defines, %d starts", d, s)
	}
	got := f.stored()
	if c := condition(got, v1.VirtualMachineInstancePaused); c == nil || c.Reason != ReasonPausedByUser || got.Status.Phase != v1.Running {
		t.Fatalf("phase %s, Paused %+v", got.Status.Phase, c)
	}
	if c := condition(got, v1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionFalse {
		t.Fatalf("Ready %+v, want False while paused", c)
	}
}

// TestStartStrategyPausedStartsThePausedGuest: the domain is created paused, and the instance
// runs with the Paused condition until virtctl unpause.
func TestStartStrategyPausedStartsThePausedGuest(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.StartStrategy = ptr.To(v1.StartStrategyPaused)
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	f.sync()
	if st, _ := f.lv.DomainState(domName); st.State != libvirt.DomainPaused {
		t.Fatalf("domain %+v, want paused", st)
	}
	f.observe()
	f.sync()
	got := f.stored()
	if c := condition(got, v1.VirtualMachineInstancePaused); got.Status.Phase != v1.Running || c == nil || c.Reason != ReasonPausedByUser {
		t.Fatalf("phase %s, Paused %+v", got.Status.Phase, c)
	}
}
