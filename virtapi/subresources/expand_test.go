package subresources

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// sizedVM is a VM in ns that names the instance type "small" (2 vCPUs, 1Gi), or typeName.
func sizedVM(name, typeName string) *v1.VirtualMachine {
	vm := &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: v1.VirtualMachineSpec{
			Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{}},
		},
	}
	if typeName != "" {
		vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: typeName, Kind: v1.InstancetypeKind}
	}
	return vm
}

func expandHandler(vms ...*v1.VirtualMachine) *Handler {
	small := &itv1beta1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: "ns"},
		Spec: itv1beta1.VirtualMachineInstancetypeSpec{CPU: itv1beta1.CPUInstancetype{Guest: 2},
			Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse("1Gi")}},
	}
	virt := fake.NewSimpleClientset(small)
	for _, vm := range vms {
		_, _ = virt.KubevirtV1().VirtualMachines(vm.Namespace).Create(context.Background(), vm, metav1.CreateOptions{})
	}
	return &Handler{Virt: virt, Instancetypes: instancetype.ClientGetter{Virt: virt, Kube: kubefake.NewSimpleClientset(), Timeout: time.Second}}
}

// checkExpanded: the answer is the VM with 2 vCPUs and 1Gi in its template and no matchers.
func checkExpanded(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var vm v1.VirtualMachine
	if err := json.Unmarshal(rec.Body.Bytes(), &vm); err != nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	d := vm.Spec.Template.Spec.Domain
	if vm.APIVersion != "kubevirt.io/v1" || vm.Kind != "VirtualMachine" || vm.Spec.Instancetype != nil || vm.Spec.Preference != nil ||
		d.CPU == nil || d.CPU.Sockets*d.CPU.Cores*d.CPU.Threads != 2 || d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.String() != "1Gi" {
		t.Fatalf("expanded VM %s", rec.Body)
	}
}

func TestServeExpandVM(t *testing.T) {
	h := expandHandler(sizedVM("sized", "small"), sizedVM("plain", ""), sizedVM("lost", "missing"))
	get := func(name string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeExpandVM(rec, httptest.NewRequest(http.MethodGet, "/", nil), "ns", name)
		return rec
	}
	if rec := get("sized"); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	} else {
		checkExpanded(t, rec)
	}
	if rec := get("plain"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"plain"`) || strings.Contains(rec.Body.String(), "memory") {
		t.Errorf("a VM without an instance type: %d %s, want it as it is", rec.Code, rec.Body)
	}
	if rec := get("lost"); rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "missing") {
		t.Errorf("a VM naming a missing instance type: %d %s, want a 500 naming it", rec.Code, rec.Body)
	}
	if rec := get("none"); rec.Code != http.StatusNotFound {
		t.Errorf("no VM: %d %s", rec.Code, rec.Body)
	}
}

func TestServeExpandSpec(t *testing.T) {
	body := func(vm *v1.VirtualMachine) string {
		vm.APIVersion, vm.Kind = "kubevirt.io/v1", "VirtualMachine"
		b, _ := json.Marshal(vm)
		return string(b)
	}
	unnamespaced := sizedVM("new", "small")
	unnamespaced.Namespace = ""
	other := sizedVM("new", "small")
	other.Namespace = "other"
	for _, tc := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"a VM not created yet", body(unnamespaced), 200, ""},
		{"a VM of the request's namespace", body(sizedVM("new", "small")), 200, ""},
		{"another namespace's VM", body(other), 400, "VM namespace must be empty or ns"},
		{"a missing instance type", body(sizedVM("new", "missing")), 400, "missing"},
		{"an unknown field", `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","spec":{"bogus":1}}`, 400, `unknown field \"bogus\"`},
		{"another kind", `{"apiVersion":"v1","kind":"Pod"}`, 400, "want kubevirt.io/v1 VirtualMachine"},
		{"no body", ``, 400, "not a valid VirtualMachine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			expandHandler().ServeExpandSpec(rec, httptest.NewRequest(http.MethodPut, "/", strings.NewReader(tc.body)), "ns")
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %s, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if tc.code == http.StatusOK {
				checkExpanded(t, rec)
			}
		})
	}
}
