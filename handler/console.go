package handler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// consoleWait is how long an attach waits for QEMU's serial socket: a user may attach as soon
// as the instance is scheduled, to watch it boot.
const consoleWait = time.Minute

// streamError is a refusal of a stream (console, port-forward) with the HTTP status virt-api
// passes on to the user.
type streamError struct {
	status int
	msg    string
}

func (e *streamError) Error() string { return e.msg }

// waitConsole dials the guest's serial port (dialConsole) every half second, from half a
// second on, until it listens or consoleWait has passed: the caller's first dial found it not
// listening yet.
func (c *Controller) waitConsole(ctx context.Context, namespace, name string) (net.Conn, error) {
	var conn net.Conn
	var dialErr error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, consoleWait, false, func(ctx context.Context) (bool, error) {
		conn, dialErr = c.dialConsole(ctx, namespace, name)
		return !errors.Is(dialErr, ErrSocketNotReady), nil
	})
	if err != nil && dialErr == nil { // cancelled before any dial
		return nil, err
	}
	return conn, dialErr // once waited out: the last dial's ErrSocketNotReady
}

// cacheLag bounds how long a request waits for this node's informer to show the instance:
// virt-api asks a handler only after reading the instance as on its node, so a miss is most
// often the write that scheduled it, not yet in the cache.
var cacheLag = 2 * time.Second

// localInstance is namespace/name when it runs on this node, else (after cacheLag) a 404 for
// virt-api.
func (c *Controller) localInstance(ctx context.Context, namespace, name string) (*v1.VirtualMachineInstance, error) {
	var vmi *v1.VirtualMachineInstance
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, cacheLag, true, func(context.Context) (bool, error) {
		var err error
		vmi, err = c.vmiLister.VirtualMachineInstances(namespace).Get(name)
		if apierrors.IsNotFound(err) || err == nil && vmi.Status.NodeName != c.opts.NodeName {
			return false, nil
		}
		return true, err
	})
	if wait.Interrupted(err) {
		return nil, &streamError{http.StatusNotFound, fmt.Sprintf("no instance %s/%s on node %s", namespace, name, c.opts.NodeName)}
	}
	return vmi, err
}

// dialConsole connects to the serial port of namespace/name's guest. Only an instance of this
// node, through its own launcher pod: the one virt-controller created for it and recorded in
// status.activePods (launcherPod), never a pod that merely carries its labels.
func (c *Controller) dialConsole(ctx context.Context, namespace, name string) (net.Conn, error) {
	vmi, err := c.localInstance(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if p := vmi.Status.Phase; p != v1.Scheduled && p != v1.Running {
		return nil, &streamError{http.StatusConflict, fmt.Sprintf("the instance is %q, not Scheduled or Running", p)}
	}
	pod, err := c.launcherPod(vmi)
	if err != nil {
		return nil, err
	}
	if pod == nil || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return nil, fmt.Errorf("%w: the launcher pod is not running", ErrSocketNotReady)
	}
	return dialLauncherSocket(PrivateDir(c.opts.KubeletRoot, pod.UID), layout.SerialSocketRel)
}
