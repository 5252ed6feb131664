package subresources

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

func withAgent(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
	vmi.Status.Conditions = append(vmi.Status.Conditions,
		v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue})
	return vmi
}

func TestServeGuestQuery(t *testing.T) {
	const osinfo = `{"hostname":"web","os":{"id":"debian"},"fsInfo":{"disks":[]}}`
	for _, tc := range []struct {
		name        string
		q           handlerapi.Query
		method      string
		vmi         *v1.VirtualMachineInstance
		handlerCode int
		handlerSays string
		code        int
		says        string
		forwarded   string
	}{
		{name: "guestosinfo", q: handlerapi.GuestOSInfo, vmi: withAgent(podNetworkInstance(v1.Running)), handlerCode: 200, handlerSays: osinfo,
			code: 200, says: osinfo, forwarded: "GET /v1/namespaces/ns/virtualmachineinstances/web/guestosinfo"},
		{name: "userlist", q: handlerapi.UserList, vmi: withAgent(podNetworkInstance(v1.Running)), handlerCode: 200, handlerSays: `{"items":[]}`,
			code: 200, says: `{"items":[]}`, forwarded: "GET /v1/namespaces/ns/virtualmachineinstances/web/userlist"},
		{name: "filesystemlist", q: handlerapi.FileSystemList, vmi: withAgent(podNetworkInstance(v1.Running)), handlerCode: 200, handlerSays: `{"items":[]}`,
			code: 200, says: `{"items":[]}`, forwarded: "GET /v1/namespaces/ns/virtualmachineinstances/web/filesystemlist"},
		{name: "no agent", q: handlerapi.GuestOSInfo, vmi: podNetworkInstance(v1.Running), code: 409, says: "VMI does not have guest agent connected"},
		{name: "not running", q: handlerapi.GuestOSInfo, vmi: withAgent(podNetworkInstance(v1.Scheduled)), code: 409, says: "VMI is not running"},
		{name: "the agent went meanwhile", q: handlerapi.UserList, vmi: withAgent(podNetworkInstance(v1.Running)), handlerCode: 409,
			handlerSays: "the guest agent is not connected or does not answer", code: 409, says: "does not answer",
			forwarded: "GET /v1/namespaces/ns/virtualmachineinstances/web/userlist"},
		{name: "no instance", q: handlerapi.GuestOSInfo, code: 404},
		{name: "PUT", q: handlerapi.GuestOSInfo, method: http.MethodPut, vmi: withAgent(podNetworkInstance(v1.Running)), code: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &fakeNodeHandler{code: tc.handlerCode, body: tc.handlerSays}
			material, port := startNodeHandler(t, node)
			virt := fake.NewSimpleClientset()
			if tc.vmi != nil {
				virt = fake.NewSimpleClientset(tc.vmi.DeepCopy())
			}
			h := &Handler{Virt: virt, Kube: kubefake.NewSimpleClientset(handlerPod("node-a")), Namespace: "kubevirt", HandlerPort: port,
				HandlerTLS: func() (handlerapi.Material, error) { return material, nil }}
			method := http.MethodGet
			if tc.method != "" {
				method = tc.method
			}
			rec := httptest.NewRecorder()
			h.ServeGuestQuery(rec, httptest.NewRequest(method, "/", nil), "ns", "web", tc.q)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %s, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if got := strings.Join(node.requests, ","); got != tc.forwarded {
				t.Errorf("the handler got %q, want %q", got, tc.forwarded)
			}
		})
	}
}
