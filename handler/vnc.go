package handler

import (
	"context"
	"fmt"
	"net"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// vnc relays the guest's display: QEMU's VNC server in the launcher pod, RFB both ways. QEMU
// serves several clients at once, so unlike a console a new one replaces nothing.
func (s *StreamServer) vnc(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	s.relayDialled(w, r, namespace+"/"+name, "vnc", func() (net.Conn, error) { return s.Controller.dialVNC(r.Context(), namespace, name) })
}

// dialVNC connects to the VNC server of namespace/name's guest: only a Running instance of
// this node with a display, through its own launcher pod (launcherPod).
func (c *Controller) dialVNC(ctx context.Context, namespace, name string) (net.Conn, error) {
	vmi, err := c.localInstance(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if p := vmi.Status.Phase; p != v1.Running {
		return nil, &streamError{http.StatusConflict, fmt.Sprintf("the instance is %q, not Running", p)}
	}
	if !vmi.Spec.Domain.Devices.GraphicsAttached() {
		return nil, &streamError{http.StatusBadRequest, handlerapi.NoDisplay}
	}
	pod, err := c.launcherPod(vmi)
	if err != nil {
		return nil, err
	}
	if pod == nil || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return nil, &streamError{http.StatusConflict, "the launcher pod is not running"}
	}
	return dialLauncherSocket(PrivateDir(c.opts.KubeletRoot, pod.UID), layout.VNCSocketRel)
}
