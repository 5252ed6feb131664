package subresources

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// ServePortForward handles GET portforward/{port}[/{protocol}] of the instance (resource
// virtualmachineinstances) or of the VM's instance (virtualmachines) namespace/name: the
// user's websocket bridged to one connection to the guest's port, which the virt-handler of
// the instance's node opens inside the launcher pod's network namespace. rest is the path
// after portforward/.
func (h *Handler) ServePortForward(w http.ResponseWriter, r *http.Request, resource, namespace, name string, rest []string) {
	target, err := handlerapi.ParsePortForward(rest)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	vmi, err := h.portForwardInstance(r.Context(), resource, namespace, name)
	if err != nil {
		writeStatus(w, err)
		return
	}
	if why := portForwardRefusal(vmi); why != "" {
		writeStatus(w, apierrors.NewConflict(vmiResource, vmi.Name, fmt.Errorf("%s", why)))
		return
	}
	// The guest's port answers or refuses at once; the handler's own dial is bounded too.
	h.relay(w, r, vmi, handlerapi.PortForwardPath(vmi.Namespace, vmi.Name, target), handlerapi.PortForwardProtocol, 30*time.Second, "port-forward")
}

// portForwardInstance is the instance a request is about: the named one, or the VM's (same
// name, owned by the VM; KubeVirt answers 409 when the VM runs none).
func (h *Handler) portForwardInstance(ctx context.Context, resource, namespace, name string) (*v1.VirtualMachineInstance, error) {
	if resource != vmResource.Resource {
		return h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	vm, err := h.Virt.KubevirtV1().VirtualMachines(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && !metav1.IsControlledBy(vmi, vm) {
		return nil, apierrors.NewConflict(vmResource, name, fmt.Errorf("VM %s is not running", name))
	}
	return vmi, err
}

// portForwardRefusal says why an instance's guest cannot be reached, "" when it can: only a
// running guest on the pod network (masquerade) has a port behind its launcher pod.
func portForwardRefusal(vmi *v1.VirtualMachineInstance) string {
	switch {
	case vmi.DeletionTimestamp != nil:
		return fmt.Sprintf("the instance %s is being deleted", vmi.Name)
	case vmi.Status.Phase != v1.Running:
		return fmt.Sprintf("the instance %s is %q, not Running", vmi.Name, vmi.Status.Phase)
	case vmi.Status.NodeName == "":
		return fmt.Sprintf("the instance %s has no node yet", vmi.Name)
	case !vmi.Spec.HasPodInterface():
		return fmt.Sprintf("the instance %s has no pod network interface (masquerade) to forward to", vmi.Name)
	case vmi.Spec.BridgeBound():
		return fmt.Sprintf("the instance %s uses the bridge binding: its guest holds the pod IP, which the pod itself can no longer reach; connect to the pod IP (or a Service) instead", vmi.Name)
	}
	return ""
}
