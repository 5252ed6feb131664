package handler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// Event reasons of the lifecycle operations, on the instance.
const (
	ReasonPausedByUserEvent = "Paused"
	ReasonUnpaused          = "Unpaused"
	ReasonSoftRebooted      = "SoftRebooted"
)

var lifecycleEvents = map[handlerapi.Operation][2]string{
	handlerapi.Pause:      {ReasonPausedByUserEvent, "Paused by user: the guest's vCPUs are stopped, its memory kept"},
	handlerapi.Unpause:    {ReasonUnpaused, "Unpaused by user"},
	handlerapi.SoftReboot: {ReasonSoftRebooted, "Soft reboot: ACPI power button pressed, the guest starts again once it powers off"},
}

// lifecycle serves op for virt-api (package handlerapi): 200 once libvirt did it, else the
// refusal's status and reason. It runs on the request's goroutine, never a sync worker's, and
// on a libvirt connection of its own, each call bounded (connect 5 s, state 10 s, the
// operation 20 s): a launcher that hangs costs its own user's request, not other instances.
// One operation per instance at a time; another one meanwhile is refused (409), not queued.
func (s *StreamServer) lifecycle(op handlerapi.Operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		namespace, name := r.PathValue("namespace"), r.PathValue("name")
		key := namespace + "/" + name
		if !s.begin(key) {
			http.Error(w, "another operation on the instance (pause, unpause, soft reboot, freeze, unfreeze) is in progress", http.StatusConflict)
			return
		}
		defer s.end(key)
		var unfreezeAfter time.Duration
		if op == handlerapi.Freeze {
			d, err := time.ParseDuration(r.URL.Query().Get(handlerapi.UnfreezeTimeoutParam))
			if err != nil || d < 0 {
				http.Error(w, "the unfreeze timeout must be a duration of 0 or more", http.StatusBadRequest)
				return
			}
			unfreezeAfter = d
		}
		err := s.Controller.runLifecycle(r.Context(), namespace, name, op, unfreezeAfter)
		if err != nil {
			status := errorStatus(err)
			klog.InfoS("lifecycle operation refused", "op", op, "vmi", key, "status", status, "err", err)
			http.Error(w, err.Error(), status)
			return
		}
		klog.InfoS("lifecycle operation done", "op", op, "vmi", key)
		w.WriteHeader(http.StatusOK)
	}
}

// errorStatus is the HTTP status that answers err of a request of virt-api.
func errorStatus(err error) int {
	var refused *streamError
	switch {
	case errors.As(err, &refused):
		return refused.status
	case isLauncherFault(err):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// begin marks key busy, false when it already was.
func (s *StreamServer) begin(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[key] {
		return false
	}
	if s.busy == nil {
		s.busy = map[string]bool{}
	}
	s.busy[key] = true
	return true
}

func (s *StreamServer) end(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, key)
}

// runLifecycle carries op out on namespace/name's domain: only a Running instance of this
// node, through its own launcher pod, whose domain is in a state op applies to. The handler
// never undoes it: a paused domain stays paused until unpaused (syncDomain starts only
// domains that never ran). The instance is enqueued so its status follows at once.
func (c *Controller) runLifecycle(ctx context.Context, namespace, name string, op handlerapi.Operation, unfreezeAfter time.Duration) error {
	vmi, lv, err := c.dialRunning(ctx, namespace, name)
	if err != nil {
		return err
	}
	// Closing waits for libvirtd's goodbye (bounded); the user need not.
	defer func() { go closeQuietly(lv) }()
	dom := DomainName(vmi)
	st, err := lv.DomainState(dom)
	if IsDomainNotFound(err) {
		return &streamError{http.StatusConflict, "the instance has no domain"}
	}
	if err != nil {
		return err
	}
	if why := lifecycleRefusal(op, st); why != "" {
		return &streamError{http.StatusConflict, why}
	}
	if op == handlerapi.Freeze || op == handlerapi.Unfreeze {
		if err := c.freezeFilesystems(vmi, lv, op == handlerapi.Unfreeze, unfreezeAfter); err != nil {
			return err
		}
		c.queue.Add(namespace + "/" + name)
		return nil
	}
	if err := callLifecycle(lv, op, dom); err != nil {
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == uint32(libvirt.ErrOperationInvalid) {
			// The domain changed state between the check and the call.
			return &streamError{http.StatusConflict, err.Error()}
		}
		return err
	}
	ev := lifecycleEvents[op]
	c.recorder.Event(vmi, corev1.EventTypeNormal, ev[0], ev[1])
	c.queue.Add(namespace + "/" + name)
	return nil
}

// dialRunning connects, for a request of virt-api, to the libvirtd of namespace/name's
// launcher: only a Running instance of this node, through its own running launcher pod, and
// not while the launcher is kept at a distance for not answering. The caller closes lv.
func (c *Controller) dialRunning(ctx context.Context, namespace, name string) (*v1.VirtualMachineInstance, Libvirt, error) {
	vmi, err := c.localInstance(ctx, namespace, name)
	if err != nil {
		return nil, nil, err
	}
	if vmi.DeletionTimestamp != nil {
		return nil, nil, &streamError{http.StatusConflict, "the instance is being deleted"}
	}
	if p := vmi.Status.Phase; p != v1.Running {
		return nil, nil, &streamError{http.StatusConflict, fmt.Sprintf("the instance is %q, not Running", p)}
	}
	pod, err := c.launcherPod(vmi)
	if err != nil {
		return nil, nil, err
	}
	if pod == nil || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return nil, nil, &streamError{http.StatusConflict, "the instance's launcher pod is not running"}
	}
	if wait := c.gate.closed(namespace + "/" + name); wait > 0 {
		return nil, nil, &streamError{http.StatusServiceUnavailable, fmt.Sprintf("the instance's launcher did not answer lately; try again in %s", wait.Round(time.Second))}
	}
	lv, err := c.opts.Dial(context.Background(), PrivateDir(c.opts.KubeletRoot, pod.UID))
	if errors.Is(err, ErrSocketNotReady) {
		return nil, nil, &streamError{http.StatusServiceUnavailable, err.Error()}
	}
	if err != nil {
		return nil, nil, err
	}
	return vmi, lv, nil
}

func callLifecycle(lv Libvirt, op handlerapi.Operation, dom string) error {
	switch op {
	case handlerapi.Pause:
		return lv.SuspendDomain(dom)
	case handlerapi.Unpause:
		return lv.ResumeDomain(dom)
	case handlerapi.SoftReboot:
		return lv.RebootDomain(dom)
	}
	return &streamError{http.StatusBadRequest, fmt.Sprintf("unknown operation %q", op)}
}

// lifecycleRefusal says why op does not apply to a domain in state st, "" when it does.
// Unpause resumes a domain paused for any reason (an I/O error, once fixed, is the user's to
// resume); pause and soft reboot need a running guest.
func lifecycleRefusal(op handlerapi.Operation, st DomainStatus) string {
	switch st.State {
	case libvirt.DomainRunning, libvirt.DomainBlocked:
		if op == handlerapi.Unpause {
			return "the instance is not paused"
		}
		return ""
	case libvirt.DomainPaused:
		switch op {
		case handlerapi.Freeze, handlerapi.Unfreeze:
			return "the instance is paused: its guest agent cannot answer until it is unpaused"
		case handlerapi.Pause:
			return "the instance is already paused"
		case handlerapi.SoftReboot:
			return "the instance is paused: unpause it first, a paused guest cannot react to the power button"
		}
		return ""
	case libvirt.DomainShutdown:
		return "the guest is shutting down"
	case libvirt.DomainPmsuspended:
		return "the guest suspended itself to RAM (ACPI S3)"
	}
	return fmt.Sprintf("the domain is not running (libvirt state %d)", st.State)
}
