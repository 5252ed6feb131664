package subresources

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

func podNetworkInstance(phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "vmi-uid"},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{
			Interfaces: []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}},
		}}},
		Status: v1.VirtualMachineInstanceStatus{Phase: phase, NodeName: "node-a"},
	}
}

func TestPortForwardRefusal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*v1.VirtualMachineInstance)
		want   string // a word of the refusal; "" accepts
	}{
		{name: "running on the pod network", change: func(*v1.VirtualMachineInstance) {}},
		{name: "scheduled", change: func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Scheduled }, want: "not Running"},
		{name: "succeeded", change: func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Succeeded }, want: "not Running"},
		{name: "being deleted", change: func(vmi *v1.VirtualMachineInstance) { vmi.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, want: "deleted"},
		{name: "no node", change: func(vmi *v1.VirtualMachineInstance) { vmi.Status.NodeName = "" }, want: "no node"},
		{name: "bridge only", change: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "br", InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}}}
		}, want: "bridge binding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := podNetworkInstance(v1.Running)
			tc.change(vmi)
			got := portForwardRefusal(vmi)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("refusal %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// TestServePortForwardAnswers: what virt-api answers before any stream exists, for both
// resources. A request that passes every check goes on to the handler of the node, of which
// the fake cluster has none (503).
func TestServePortForwardAnswers(t *testing.T) {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "vm-uid"}}
	owned := func(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
		vmi.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(vm, v1.SchemeGroupVersion.WithKind("VirtualMachine"))}
		return vmi
	}
	lonely := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: "ns"}}
	for _, tc := range []struct {
		name     string
		objects  []runtime.Object
		resource string
		target   string
		rest     []string
		code     int
		says     string
	}{
		{name: "port 0", resource: "virtualmachineinstances", target: "web", rest: []string{"0"}, code: http.StatusBadRequest, says: "1 to 65535"},
		{name: "port 65536", resource: "virtualmachineinstances", target: "web", rest: []string{"65536"}, code: http.StatusBadRequest},
		{name: "sctp", resource: "virtualmachineinstances", target: "web", rest: []string{"22", "sctp"}, code: http.StatusBadRequest, says: "tcp or udp"},
		{name: "no port", resource: "virtualmachines", target: "web", rest: nil, code: http.StatusBadRequest},
		{name: "no instance", resource: "virtualmachineinstances", target: "web", rest: []string{"22"}, code: http.StatusNotFound},
		{name: "no VM", resource: "virtualmachines", target: "web", rest: []string{"22"}, code: http.StatusNotFound},
		{name: "VM not running", objects: []runtime.Object{lonely}, resource: "virtualmachines", target: "idle", rest: []string{"22"}, code: http.StatusConflict, says: "not running"},
		{name: "VM's same-named instance it does not own", objects: []runtime.Object{vm, podNetworkInstance(v1.Running)}, resource: "virtualmachines", target: "web", rest: []string{"22"}, code: http.StatusConflict},
		{name: "instance scheduled", objects: []runtime.Object{podNetworkInstance(v1.Scheduled)}, resource: "virtualmachineinstances", target: "web", rest: []string{"80", "tcp"}, code: http.StatusConflict, says: "not Running"},
		{name: "instance running, no handler", objects: []runtime.Object{podNetworkInstance(v1.Running)}, resource: "virtualmachineinstances", target: "web", rest: []string{"80", "udp"}, code: http.StatusServiceUnavailable, says: "no virt-handler"},
		{name: "VM running, no handler", objects: []runtime.Object{vm, owned(podNetworkInstance(v1.Running))}, resource: "virtualmachines", target: "web", rest: []string{"22"}, code: http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Virt: fake.NewSimpleClientset(tc.objects...), Kube: kubefake.NewSimpleClientset(), Namespace: "kubevirt",
				HandlerTLS: func() (handlerapi.Material, error) { return handlerapi.Material{}, nil }}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/apis/subresources.kubevirt.io/v1/namespaces/ns/"+tc.resource+"/"+tc.target+"/portforward/"+strings.Join(tc.rest, "/"), nil)
			h.ServePortForward(rec, req, tc.resource, "ns", tc.target, tc.rest)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Errorf("%d %s, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
		})
	}
}
