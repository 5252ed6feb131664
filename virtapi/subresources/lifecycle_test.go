package subresources

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/virtapi/certs"
)

func agentConnected() v1.VirtualMachineInstanceCondition {
	return v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue}
}

func pausedCondition() []v1.VirtualMachineInstanceCondition {
	return []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue, Reason: "PausedByUser"}}
}

func TestInstanceRefusal(t *testing.T) {
	paused := func(vmi *v1.VirtualMachineInstance) { vmi.Status.Conditions = pausedCondition() }
	notRunning := func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Scheduled }
	deleting := func(vmi *v1.VirtualMachineInstance) { vmi.DeletionTimestamp = &metav1.Time{Time: time.Now()} }
	noACPI := func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Domain.Features = &v1.Features{ACPI: v1.FeatureState{Enabled: ptr.To(false)}}
	}
	withAgent := func(vmi *v1.VirtualMachineInstance) {
		vmi.Status.Conditions = append(vmi.Status.Conditions, agentConnected())
	}
	pausedFalse := func(vmi *v1.VirtualMachineInstance) {
		vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionFalse}}
	}
	for _, tc := range []struct {
		name   string
		op     handlerapi.Operation
		change func(*v1.VirtualMachineInstance)
		want   string // a word of the 409; "" accepts
	}{
		{"pause a running VMI", handlerapi.Pause, nil, ""},
		{"pause a paused VMI", handlerapi.Pause, paused, "already paused"},
		{"pause a scheduled VMI", handlerapi.Pause, notRunning, "not running"},
		{"pause a VMI being deleted", handlerapi.Pause, deleting, "being deleted"},
		{"pause, Paused False", handlerapi.Pause, pausedFalse, ""},
		{"unpause a paused VMI", handlerapi.Unpause, paused, ""},
		{"unpause a running VMI", handlerapi.Unpause, nil, "not paused"},
		{"unpause, Paused False", handlerapi.Unpause, pausedFalse, "not paused"},
		{"unpause a scheduled VMI", handlerapi.Unpause, notRunning, "not running"},
		{"soft reboot a running VMI", handlerapi.SoftReboot, nil, ""},
		{"soft reboot a paused VMI", handlerapi.SoftReboot, paused, "paused"},
		{"soft reboot without ACPI", handlerapi.SoftReboot, noACPI, "ACPI"},
		{"soft reboot a scheduled VMI", handlerapi.SoftReboot, notRunning, "not running"},
		{"freeze a VMI with its agent", handlerapi.Freeze, withAgent, ""},
		{"freeze a VMI without an agent", handlerapi.Freeze, nil, "guest agent"},
		{"freeze a paused VMI", handlerapi.Freeze, func(vmi *v1.VirtualMachineInstance) { withAgent(vmi); paused(vmi) }, "paused"},
		{"freeze a scheduled VMI", handlerapi.Freeze, notRunning, "not running"},
		{"unfreeze a VMI", handlerapi.Unfreeze, nil, ""},
		{"unfreeze a paused VMI", handlerapi.Unfreeze, paused, "paused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := podNetworkInstance(v1.Running)
			if tc.change != nil {
				tc.change(vmi)
			}
			got := InstanceRefusal(tc.op, vmi)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.want != "" && (got == nil || got.Status().Code != http.StatusConflict || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("%v, want a 409 saying %q", got, tc.want)
			}
		})
	}
}

// fakeNodeHandler is a virt-handler's stream server on 127.0.0.1 with the handlers' side of
// the mutual TLS, answering every request with code and body; it records the requests.
type fakeNodeHandler struct {
	mu       sync.Mutex
	requests []string
	code     int
	body     string
}

func (f *fakeNodeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	w.WriteHeader(f.code)
	_, _ = w.Write([]byte(f.body))
}

// startNodeHandler serves f and returns virt-api's side of the TLS and the port.
func startNodeHandler(t *testing.T, f *fakeNodeHandler) (handlerapi.Material, int) {
	now := time.Now()
	b, err := certs.Renew(certs.Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := certs.IssueClient(b, handlerapi.ClientName, now)
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, err := handlerapi.ServerConfig(handlerapi.Material{CABundle: b.CABundle, Cert: b.Cert, Key: b.Key})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f)
	srv.TLS = serverTLS
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return handlerapi.Material{CABundle: b.CABundle, Cert: cert, Key: key}, p
}

func handlerPod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-handler-x", Namespace: "kubevirt", Labels: HandlerLabel},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"},
	}
}

// TestServeInstance: what virt-api answers, and what it asks of the node's handler.
func TestServeInstance(t *testing.T) {
	paused := podNetworkInstance(v1.Running)
	paused.Status.Conditions = pausedCondition()
	withAgent := podNetworkInstance(v1.Running)
	withAgent.Status.Conditions = []v1.VirtualMachineInstanceCondition{agentConnected()}
	for _, tc := range []struct {
		name        string
		op          handlerapi.Operation
		method      string
		body        string
		vmi         *v1.VirtualMachineInstance
		noHandler   bool
		handlerCode int
		handlerSays string
		code        int
		says        string
		forwarded   string // the handler's request, "" for none
	}{
		{name: "pause", op: handlerapi.Pause, vmi: podNetworkInstance(v1.Running), handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/pause"},
		{name: "pause, empty options", op: handlerapi.Pause, body: `{}`, vmi: podNetworkInstance(v1.Running), handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/pause"},
		{name: "pause, dry run", op: handlerapi.Pause, body: `{"dryRun":["All"]}`, vmi: podNetworkInstance(v1.Running), handlerCode: 200, code: 200},
		{name: "pause, dry run refused too", op: handlerapi.Pause, body: `{"dryRun":["All"]}`, vmi: paused, code: 409, says: "already paused"},
		{name: "unpause", op: handlerapi.Unpause, vmi: paused, handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/unpause"},
		{name: "soft reboot", op: handlerapi.SoftReboot, vmi: podNetworkInstance(v1.Running), handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/softreboot"},
		{name: "freeze", op: handlerapi.Freeze, body: `{"unfreezeTimeout":"5m0s"}`, vmi: withAgent, handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/freeze?unfreezeTimeout=5m0s"},
		{name: "freeze until unfrozen", op: handlerapi.Freeze, body: `{"unfreezeTimeout":"0s"}`, vmi: withAgent, handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/freeze?unfreezeTimeout=0s"},
		{name: "freeze without a timeout", op: handlerapi.Freeze, vmi: withAgent, code: 400, says: "unfreezeTimeout: required"},
		{name: "freeze with a negative timeout", op: handlerapi.Freeze, body: `{"unfreezeTimeout":"-1m"}`, vmi: withAgent, code: 400, says: "unfreezeTimeout: -1m0s is negative"},
		{name: "freeze without an agent", op: handlerapi.Freeze, body: `{"unfreezeTimeout":"1m"}`, vmi: podNetworkInstance(v1.Running), code: 409, says: "guest agent"},
		{name: "unfreeze", op: handlerapi.Unfreeze, vmi: podNetworkInstance(v1.Running), handlerCode: 200, code: 200,
			forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/unfreeze"},
		{name: "the handler refuses", op: handlerapi.Pause, vmi: podNetworkInstance(v1.Running), handlerCode: 409, handlerSays: "the instance is already paused\n",
			code: 409, says: `virtualmachineinstances.kubevirt.io \"web\": virt-handler: the instance is already paused"`, forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/pause"},
		{name: "the handler's launcher hangs", op: handlerapi.Pause, vmi: podNetworkInstance(v1.Running), handlerCode: 503, handlerSays: "did not answer",
			code: 503, says: "did not answer", forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/pause"},
		{name: "libvirt fails", op: handlerapi.Unpause, vmi: paused, handlerCode: 500, handlerSays: "resuming the domain: boom",
			code: 500, says: "boom", forwarded: "PUT /v1/namespaces/ns/virtualmachineinstances/web/unpause"},
		{name: "no handler on the node", op: handlerapi.Pause, vmi: podNetworkInstance(v1.Running), noHandler: true, code: 503, says: "no virt-handler"},
		{name: "no instance", op: handlerapi.Pause, code: 404},
		{name: "not paused", op: handlerapi.Unpause, vmi: podNetworkInstance(v1.Running), code: 409, says: "VMI is not paused"},
		{name: "bad body", op: handlerapi.Pause, body: `{`, vmi: podNetworkInstance(v1.Running), code: 400},
		{name: "GET", op: handlerapi.Pause, method: http.MethodGet, vmi: podNetworkInstance(v1.Running), code: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &fakeNodeHandler{code: tc.handlerCode, body: tc.handlerSays}
			material, port := startNodeHandler(t, node)
			virt := fake.NewSimpleClientset()
			if tc.vmi != nil {
				virt = fake.NewSimpleClientset(tc.vmi.DeepCopy())
			}
			kube := kubefake.NewSimpleClientset(handlerPod("node-a"))
			if tc.noHandler {
				kube = kubefake.NewSimpleClientset()
			}
			h := &Handler{Virt: virt, Kube: kube, Namespace: "kubevirt", HandlerPort: port,
				HandlerTLS: func() (handlerapi.Material, error) { return material, nil }}
			method := http.MethodPut
			if tc.method != "" {
				method = tc.method
			}
			rec := httptest.NewRecorder()
			h.ServeInstance(rec, httptest.NewRequest(method, "/", strings.NewReader(tc.body)), "ns", "web", tc.op)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %s, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if got := strings.Join(node.requests, ","); got != tc.forwarded {
				t.Errorf("the handler got %q, want %q", got, tc.forwarded)
			}
		})
	}
}
