package subresources

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// ServeGuestQuery handles GET guestosinfo, userlist and filesystemlist of the instance
// namespace/name, as KubeVirt does: 409 unless it runs with its guest agent connected, else
// the agent's answer from the virt-handler of the instance's node (package handlerapi).
func (h *Handler) ServeGuestQuery(w http.ResponseWriter, r *http.Request, namespace, name string, q handlerapi.Query) {
	if r.Method != http.MethodGet {
		writeStatus(w, apierrors.NewMethodNotSupported(vmiResource, r.Method))
		return
	}
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	if refusal := GuestQueryRefusal(vmi); refusal != nil {
		writeStatus(w, refusal)
		return
	}
	body, err := h.callHandler(r, vmi, http.MethodGet, handlerapi.QueryPath(namespace, name, q))
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// GuestQueryRefusal is KubeVirt's 409 for a guest agent query of vmi, nil when it may go on.
func GuestQueryRefusal(vmi *v1.VirtualMachineInstance) *apierrors.StatusError {
	switch {
	case vmi.Status.Phase != v1.Running:
		return apierrors.NewConflict(vmiResource, vmi.Name, errors.New("VMI is not running"))
	case !hasCondition(vmi, v1.VirtualMachineInstanceAgentConnected):
		return apierrors.NewConflict(vmiResource, vmi.Name, errors.New("VMI does not have guest agent connected"))
	}
	return nil
}
