package handler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/podnet"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// dialGuestIn connects to a guest port inside a launcher pod's network namespace; a variable
// so the tests can stand in for the namespace switch, which needs CAP_SYS_ADMIN.
var dialGuestIn = podnet.DialGuest

// portForward relays one connection to a port of the guest. Unlike the console, any number of
// them may be open at once: each is its own connection.
func (s *StreamServer) portForward(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	target, err := handlerapi.ParsePortForward([]string{r.PathValue("port"), r.PathValue("protocol")})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	what := fmt.Sprintf("port-forward %d/%s", target.Port, target.Protocol)
	s.relayDialled(w, r, namespace+"/"+name, what, func() (net.Conn, error) {
		return s.Controller.dialGuest(r.Context(), namespace, name, target)
	})
}

// relayDialled splices the request's websocket with the connection dial opens. It dials before
// the upgrade, so a refusal is an HTTP status virt-api passes on; what names the stream in
// logs and in the close message.
func (s *StreamServer) relayDialled(w http.ResponseWriter, r *http.Request, key, what string, dial func() (net.Conn, error)) {
	conn, err := dial()
	if err != nil {
		status := http.StatusServiceUnavailable
		var refused *streamError
		if errors.As(err, &refused) {
			status = refused.status
		}
		http.Error(w, err.Error(), status)
		return
	}
	defer conn.Close()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	stream := &handlerapi.WebsocketStream{Conn: ws}
	klog.V(2).InfoS(what+" opened", "vmi", key)
	err = handlerapi.Splice(stream, conn)
	msg := what + " closed"
	if err != nil {
		msg = what + ": " + err.Error()
	}
	_ = stream.Close(msg)
	klog.V(2).InfoS(what+" closed", "vmi", key, "err", err)
}

// dialGuest connects to target on namespace/name's guest. Only an instance of this node that
// runs with a pod interface, through its own launcher pod (launcherPod): the namespace is the
// one of the process behind the pod's libvirt socket, which podnet checks is in the pod.
func (c *Controller) dialGuest(ctx context.Context, namespace, name string, target handlerapi.PortForward) (net.Conn, error) {
	vmi, err := c.localInstance(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if p := vmi.Status.Phase; p != v1.Running {
		return nil, &streamError{http.StatusConflict, fmt.Sprintf("the instance is %q, not Running", p)}
	}
	if !vmi.Spec.HasPodInterface() || vmi.Spec.BridgeBound() {
		// A bridge-bound guest holds the pod IP, which the pod's namespace cannot reach.
		return nil, &streamError{http.StatusConflict, "the instance has no masquerade interface on the pod network"}
	}
	pod, err := c.launcherPod(vmi)
	if err != nil {
		return nil, err
	}
	if pod == nil || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return nil, &streamError{http.StatusConflict, "the instance's launcher pod is not running"}
	}
	pid, err := c.launcherPID(pod.UID)
	if err != nil {
		return nil, err
	}
	conn, err := dialGuestIn(ctx, pid, pod.UID, target.Protocol, target.Port)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil, &streamError{http.StatusBadGateway, fmt.Sprintf("the guest refused the connection to %s port %d", target.Protocol, target.Port)}
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to the guest's %s port %d: %w", target.Protocol, target.Port, err)
	}
	return conn, nil
}

// launcherPID is the process behind the pod's libvirt socket, read from a connection of its
// own: the sync's cached connection belongs to the instance's worker.
func (c *Controller) launcherPID(podUID types.UID) (int, error) {
	conn, err := dialLauncherSocket(PrivateDir(c.opts.KubeletRoot, podUID), layout.SocketRel)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if pid := peerPID(conn); pid > 0 {
		return pid, nil
	}
	return 0, errors.New("the launcher's libvirtd has no process ID visible to the handler")
}
