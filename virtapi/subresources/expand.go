package subresources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/virtapi/admission"
)

var expandSpecResource = schema.GroupResource{Group: "subresources.kubevirt.io", Resource: "expand-vm-spec"}

// maxExpandBody bounds the VM a client sends to expand-vm-spec: a VM object is a few KiB, its
// cloud-init user data at most a few more.
const maxExpandBody = 1 << 20

// ServeExpandVM handles GET virtualmachines/NAME/expand-spec, as KubeVirt does: the stored VM
// with its instance type and preference applied to its template (the copies it is pinned to)
// and both matchers removed, so the answer is a VM that runs the same without them. A VM
// naming neither comes back as it is. A VM that cannot be expanded is a 500 naming why.
func (h *Handler) ServeExpandVM(w http.ResponseWriter, r *http.Request, namespace, name string) {
	if r.Method != http.MethodGet {
		writeStatus(w, apierrors.NewMethodNotSupported(vmResource, r.Method))
		return
	}
	vm, err := h.Virt.KubevirtV1().VirtualMachines(namespace).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	h.writeExpanded(w, vm, func(msg string) error { return apierrors.NewInternalError(fmt.Errorf("%s", msg)) })
}

// ServeExpandSpec handles PUT namespaces/NS/expand-vm-spec: the same for a VM in the body,
// which need not exist (`virtctl expand --file`). The body must be a VirtualMachine of no other
// namespace; what is wrong with it is a 400.
func (h *Handler) ServeExpandSpec(w http.ResponseWriter, r *http.Request, namespace string) {
	if r.Method != http.MethodPut {
		writeStatus(w, apierrors.NewMethodNotSupported(expandSpecResource, r.Method))
		return
	}
	vm, err := readVM(r.Body)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("Object is not a valid VirtualMachine: %v", err)))
		return
	}
	if vm.Namespace != "" && vm.Namespace != namespace {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("VM namespace must be empty or %s", namespace)))
		return
	}
	vm.Namespace = namespace
	h.writeExpanded(w, vm, func(msg string) error { return apierrors.NewBadRequest(msg) })
}

// readVM decodes a VirtualMachine strictly: an unknown field or another kind is an error, as
// kubectl's validation would say.
func readVM(body io.Reader) (*v1.VirtualMachine, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxExpandBody+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxExpandBody {
		return nil, fmt.Errorf("larger than %d bytes", maxExpandBody)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var vm v1.VirtualMachine
	if err := dec.Decode(&vm); err != nil {
		return nil, err
	}
	if gvk := vm.GroupVersionKind(); gvk.Group != v1.GroupName || gvk.Kind != "VirtualMachine" {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s/v1 VirtualMachine", vm.APIVersion, vm.Kind, v1.GroupName)
	}
	return &vm, nil
}

// writeExpanded answers vm expanded, or failed(why).
func (h *Handler) writeExpanded(w http.ResponseWriter, vm *v1.VirtualMachine, failed func(string) error) {
	if vm.Spec.Instancetype != nil || vm.Spec.Preference != nil {
		tmpl, errs := admission.ExpandVM(vm, h.Instancetypes)
		if len(errs) > 0 {
			writeStatus(w, failed("cannot expand instancetype to VM: "+errs.ToAggregate().Error()))
			return
		}
		if tmpl != nil {
			vm.Spec.Template = tmpl
		}
		vm.Spec.Instancetype, vm.Spec.Preference = nil, nil
	}
	vm.APIVersion, vm.Kind = v1.SchemeGroupVersion.String(), "VirtualMachine"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(vm)
}
