package subresources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// Options is the body of PUT start, stop and restart; all fields are optional. The names are
// KubeVirt's: stop takes gracePeriod, restart gracePeriodSeconds.
type Options struct {
	// GracePeriod (stop) or GracePeriodSeconds (restart), when set, also deletes the
	// launcher pod with that grace period, so the guest gets at most that long (0: killed at
	// once). virtctl sends it only with --force.
	GracePeriod        *int64 `json:"gracePeriod,omitempty"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	// Paused (start) starts the instance paused, as virtctl start --paused asks.
	Paused bool `json:"paused,omitempty"`
	// DryRun ["All"] has the API server check the request's writes (admission included)
	// without persisting them: the answer is the one the request would get.
	DryRun []string `json:"dryRun,omitempty"`
}

func (o Options) grace() *int64 {
	if o.GracePeriod != nil {
		return o.GracePeriod
	}
	return o.GracePeriodSeconds
}

// Handler serves the subresources. Its clients act as virt-api's service account: the user
// was already authorized by the apiserver for the subresource itself (virtualmachines/start
// ...), which is all KubeVirt asks of them too.
type Handler struct {
	Virt versioned.Interface
	Kube kubernetes.Interface
	// Namespace is where the virt-handler pods run; HandlerTLS is virt-api's side of the
	// mutual TLS with them, HandlerPort their stream port (0: handlerapi.Port).
	Namespace   string
	HandlerTLS  func() (handlerapi.Material, error)
	HandlerPort int
	// Instancetypes reads the instance types and preferences VMs name, for expand-spec.
	Instancetypes instancetype.Getter
}

var vmResource = schema.GroupResource{Group: v1.GroupName, Resource: "virtualmachines"}

// ServeVM handles PUT start|stop|restart of the VirtualMachine namespace/name.
func (h *Handler) ServeVM(w http.ResponseWriter, r *http.Request, namespace, name string, verb Verb) {
	var opts Options
	if err := readPut(r, vmResource, &opts); err != nil {
		writeStatus(w, err)
		return
	}
	if g := opts.grace(); g != nil && *g < 0 {
		writeStatus(w, apierrors.NewBadRequest("grace period must be 0 or more"))
		return
	}
	vmi, err := h.act(r.Context(), namespace, name, verb, opts)
	if err != nil {
		writeStatus(w, err)
		return
	}
	if g := opts.grace(); g != nil && verb != Start && vmi != nil {
		if err := h.deleteLauncherPods(r.Context(), vmi, *g, opts.DryRun); err != nil {
			writeStatus(w, err)
			return
		}
	}
	klog.V(2).InfoS("accepted", "verb", verb, "vm", klog.KRef(namespace, name))
	writeAccepted(w)
}

// act decides and writes, again on a fresh read after every write conflict, so that two
// concurrent requests never both succeed: the loser sees the winner's pending request.
// It returns the instance the decision was made against.
func (h *Handler) act(ctx context.Context, namespace, name string, verb Verb, opts Options) (*v1.VirtualMachineInstance, error) {
	write := metav1.UpdateOptions{DryRun: opts.DryRun}
	var vmi *v1.VirtualMachineInstance
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vm, err := h.Virt.KubevirtV1().VirtualMachines(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		vmi, err = h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			vmi = nil
		case err != nil:
			return err
		case !metav1.IsControlledBy(vmi, vm):
			vmi = nil // a same-named instance the VM does not own is not its instance
		}
		d := Decide(verb, vm, vmi, opts.Paused)
		switch {
		case d.Conflict != "":
			return &refused{apierrors.NewConflict(vmResource, name, errors.New(d.Conflict))}
		case d.RunStrategy != "":
			d.ApplySpec(vm)
			_, err = h.Virt.KubevirtV1().VirtualMachines(namespace).Update(ctx, vm, write)
		default:
			vm.Status.StateChangeRequests = d.Requests
			_, err = h.Virt.KubevirtV1().VirtualMachines(namespace).UpdateStatus(ctx, vm, write)
		}
		return err
	})
	var r *refused
	if errors.As(err, &r) {
		return nil, r.err
	}
	return vmi, err
}

// refused hides a decision's 409 from RetryOnConflict, which would take it for a write
// conflict and retry it: it deliberately neither embeds nor unwraps to the API error.
type refused struct{ err *apierrors.StatusError }

func (r *refused) Error() string { return r.err.Error() }

// deleteLauncherPods deletes the instance's launcher pods with the given grace period:
// --force --grace-period=0 kills the guest at once instead of waiting for its ACPI shutdown.
func (h *Handler) deleteLauncherPods(ctx context.Context, vmi *v1.VirtualMachineInstance, grace int64, dryRun []string) error {
	pods := h.Kube.CoreV1().Pods(vmi.Namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
	if err != nil {
		return err
	}
	for _, p := range list.Items {
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: metav1.NewUIDPreconditions(string(p.UID)), DryRun: dryRun})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		klog.InfoS("deleted launcher pod", "pod", klog.KObj(&p), "gracePeriod", grace, "dryRun", len(dryRun) > 0)
	}
	return nil
}

// readPut checks a subresource request is a PUT and decodes its optional JSON body (at most
// 64 KiB) into opts.
func readPut(r *http.Request, resource schema.GroupResource, opts any) error {
	if r.Method != http.MethodPut {
		return apierrors.NewMethodNotSupported(resource, r.Method)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err == nil && len(body) > 0 {
		err = json.Unmarshal(body, opts)
	}
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("request body: %v", err))
	}
	return nil
}
