package subresources

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// LifecycleOptions is the body of PUT pause and unpause (KubeVirt's PauseOptions and
// UnpauseOptions) and of freeze (its FreezeUnfreezeTimeout); softreboot and unfreeze take
// none.
type LifecycleOptions struct {
	// DryRun ["All"] checks the request and answers as if done, changing nothing.
	DryRun []string `json:"dryRun,omitempty"`
	// UnfreezeTimeout, required by freeze, is how long the guest stays frozen unless unfrozen
	// before ("0s": until unfrozen).
	UnfreezeTimeout *metav1.Duration `json:"unfreezeTimeout,omitempty"`
}

// handlerPath is the path of op on the handler, a BadRequest when its options are wrong.
func (o LifecycleOptions) handlerPath(namespace, name string, op handlerapi.Operation) (string, error) {
	if op != handlerapi.Freeze {
		return handlerapi.LifecyclePath(namespace, name, op), nil
	}
	switch t := o.UnfreezeTimeout; {
	case t == nil:
		return "", apierrors.NewBadRequest("unfreezeTimeout: required: how long the guest stays frozen unless unfrozen before (0s: until unfrozen)")
	case t.Duration < 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("unfreezeTimeout: %s is negative", t.Duration))
	}
	return handlerapi.FreezePath(namespace, name, o.UnfreezeTimeout.Duration), nil
}

func (o LifecycleOptions) dryRun() bool {
	return len(o.DryRun) > 0 && o.DryRun[0] == metav1.DryRunAll
}

// handlerCallTimeout bounds virt-api's wait for a handler's lifecycle answer: the handler's
// own calls to libvirt are bounded well below it, and the apiserver's request timeout (60 s)
// above.
const handlerCallTimeout = 45 * time.Second

// ServeInstance handles PUT pause, unpause and softreboot of the instance namespace/name:
// InstanceRefusal's 409s, else the operation forwarded to the virt-handler of the instance's
// node (mutual TLS, package handlerapi), which does it through libvirt and answers once done.
// 200 with no body, as KubeVirt answers; the handler's refusal as a Status otherwise.
func (h *Handler) ServeInstance(w http.ResponseWriter, r *http.Request, namespace, name string, op handlerapi.Operation) {
	var opts LifecycleOptions
	if err := readPut(r, vmiResource, &opts); err != nil {
		writeStatus(w, err)
		return
	}
	path, err := opts.handlerPath(namespace, name, op)
	if err != nil {
		writeStatus(w, err)
		return
	}
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	if refusal := InstanceRefusal(op, vmi); refusal != nil {
		writeStatus(w, refusal)
		return
	}
	if opts.dryRun() {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := h.putHandler(r, vmi, path); err != nil {
		writeStatus(w, err)
		return
	}
	klog.InfoS("lifecycle operation", "op", op, "vmi", klog.KObj(vmi), "node", vmi.Status.NodeName)
	w.WriteHeader(http.StatusOK)
}

// InstanceRefusal is the 409 KubeVirt gives op on vmi as the API shows it, nil when the
// request goes on to the node (whose handler checks the domain itself: the status may lag).
func InstanceRefusal(op handlerapi.Operation, vmi *v1.VirtualMachineInstance) *apierrors.StatusError {
	refuse := func(format string, args ...any) *apierrors.StatusError {
		return apierrors.NewConflict(vmiResource, vmi.Name, fmt.Errorf(format, args...))
	}
	if vmi.DeletionTimestamp != nil {
		return refuse("VMI is being deleted")
	}
	if p := vmi.Status.Phase; p != v1.Running {
		return refuse("VMI is not running: its phase is %q", p)
	}
	paused := hasCondition(vmi, v1.VirtualMachineInstancePaused)
	switch op {
	case handlerapi.Pause:
		if paused {
			return refuse("VMI is already paused")
		}
	case handlerapi.Unpause:
		if !paused {
			return refuse("VMI is not paused")
		}
	case handlerapi.Freeze:
		switch {
		case paused:
			return refuse("VMI is paused: its guest agent cannot answer until it is unpaused")
		case !hasCondition(vmi, v1.VirtualMachineInstanceAgentConnected):
			return refuse("VMI does not have guest agent connected")
		}
	case handlerapi.Unfreeze:
		if paused {
			return refuse("VMI is paused: its guest agent cannot answer until it is unpaused")
		}
	case handlerapi.SoftReboot:
		if paused {
			return refuse("VMI is paused: unpause it first")
		}
		// KubeVirt reboots through its guest agent or the ACPI power button; vmctl has no
		// agent, so a guest without ACPI has nothing to hear the request.
		if f := vmi.Spec.Domain.Features; f != nil && f.ACPI.Enabled != nil && !*f.ACPI.Enabled {
			return refuse("VMI has neither a guest agent connected nor the ACPI feature enabled")
		}
	default:
		return apierrors.NewNotFound(vmiResource, vmi.Name+"/"+string(op))
	}
	return nil
}

func hasCondition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) bool {
	c := vmi.Status.Condition(t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// putHandler sends PUT path to the virt-handler of vmi's node and waits for its answer.
func (h *Handler) putHandler(r *http.Request, vmi *v1.VirtualMachineInstance, path string) error {
	_, err := h.callHandler(r, vmi, http.MethodPut, path)
	return err
}

// maxHandlerAnswer bounds what virt-api reads of a handler's answer: a guest agent's report
// is a few KiB (package handler/guestagent bounds it), a screenshot's PNG at most a few MiB.
const maxHandlerAnswer = 16 << 20

// callHandler sends method path to the virt-handler of vmi's node and returns its answer's
// body once it is 200.
func (h *Handler) callHandler(r *http.Request, vmi *v1.VirtualMachineInstance, method, path string) ([]byte, error) {
	ip, err := h.handlerIP(r, vmi.Status.NodeName)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := h.handlerTLSConfig()
	if err != nil {
		return nil, err
	}
	// One connection per call: calls are rare, and a kept-alive connection to a handler pod
	// that went away would fail the next one.
	client := &http.Client{Timeout: handlerCallTimeout, Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}
	u, err := url.Parse(path) // a path, with a query for some operations
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	u.Scheme, u.Host = "https", net.JoinHostPort(ip, strconv.Itoa(h.handlerPort()))
	req, err := http.NewRequestWithContext(r.Context(), method, u.String(), nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, handlerError(vmi.Name, nil, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, handlerError(vmi.Name, resp, nil)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHandlerAnswer))
	if err != nil {
		return nil, handlerError(vmi.Name, nil, err)
	}
	return body, nil
}
