package subresources

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// HandlerLabel selects the virt-handler pods (manifests/virt-handler.yaml).
var HandlerLabel = labels.Set{"kubevirt.io": "virt-handler"}

var vmiResource = schema.GroupResource{Group: v1.GroupName, Resource: "virtualmachineinstances"}

var upgrader = websocket.Upgrader{
	Subprotocols: []string{handlerapi.ConsoleProtocol},
	// The apiserver authenticated and authorized the user and proxies the upgrade to us; a
	// browser origin means nothing here.
	CheckOrigin: func(*http.Request) bool { return true },
}

// ServeConsole handles GET console of the instance namespace/name: the user's websocket
// bridged to the console stream of the virt-handler of the instance's node (package
// handlerapi), which picks the instance's own launcher pod. virt-api needs no pod access.
func (h *Handler) ServeConsole(w http.ResponseWriter, r *http.Request, namespace, name string) {
	ctx := r.Context()
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	// Scheduled too, not only Running: a user attaching while the guest starts sees it boot
	// (the handler waits for QEMU's serial socket).
	if p := vmi.Status.Phase; p != v1.Running && p != v1.Scheduled {
		writeStatus(w, apierrors.NewConflict(vmiResource, name, fmt.Errorf("the instance is %q, not Scheduled or Running", p)))
		return
	}
	h.relay(w, r, vmi, handlerapi.ConsolePath(vmi.Namespace, vmi.Name), handlerapi.ConsoleProtocol, 90*time.Second, "console")
}

// ServeVNC handles GET vnc of the instance namespace/name: the user's websocket bridged to
// the guest's display (RFB) through the virt-handler of its node, as the console is; and GET
// vnc/screenshot (screenshot), the display as a PNG image, as KubeVirt's. The instance must
// run and have a display.
func (h *Handler) ServeVNC(w http.ResponseWriter, r *http.Request, namespace, name string, screenshot bool) {
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	if p := vmi.Status.Phase; p != v1.Running {
		writeStatus(w, apierrors.NewConflict(vmiResource, name, fmt.Errorf("the instance is %q, not Running", p)))
		return
	}
	if !vmi.Spec.Domain.Devices.GraphicsAttached() {
		writeStatus(w, apierrors.NewBadRequest(handlerapi.NoDisplay))
		return
	}
	if !screenshot {
		h.relay(w, r, vmi, handlerapi.VNCPath(vmi.Namespace, vmi.Name), handlerapi.ConsoleProtocol, 30*time.Second, "vnc")
		return
	}
	image, err := h.callHandler(r, vmi, http.MethodGet, handlerapi.ScreenshotPath(namespace, name))
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(image)
}

// relay opens the stream (path, protocol) on the virt-handler of vmi's node, upgrades the
// client's request and splices the two until either ends; what names the stream in logs and in
// the close message.
func (h *Handler) relay(w http.ResponseWriter, r *http.Request, vmi *v1.VirtualMachineInstance, path, protocol string, handshake time.Duration, what string) {
	upstream, err := h.dialHandler(r, vmi, path, protocol, handshake)
	if err != nil {
		writeStatus(w, err)
		return
	}
	defer upstream.Close()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered already
	}
	client := &handlerapi.WebsocketStream{Conn: conn}
	klog.InfoS(what+" attached", "vmi", klog.KObj(vmi), "node", vmi.Status.NodeName)
	err = handlerapi.Splice(client, &handlerapi.WebsocketStream{Conn: upstream})
	msg := what + " closed"
	if err != nil {
		msg = what + ": " + err.Error()
		klog.InfoS(what+" ended", "vmi", klog.KObj(vmi), "err", err)
	}
	_ = client.Close(msg)
}

// dialHandler opens a stream (path, protocol) on the virt-handler of vmi's node, over mutual
// TLS; handshake bounds the handler's answer (the console waits for the guest's serial port).
func (h *Handler) dialHandler(r *http.Request, vmi *v1.VirtualMachineInstance, path, protocol string, handshake time.Duration) (*websocket.Conn, error) {
	ip, err := h.handlerIP(r, vmi.Status.NodeName)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := h.handlerTLSConfig()
	if err != nil {
		return nil, err
	}
	dialer := websocket.Dialer{TLSClientConfig: tlsConfig, Subprotocols: []string{protocol}, HandshakeTimeout: handshake}
	u := url.URL{Scheme: "wss", Host: net.JoinHostPort(ip, strconv.Itoa(h.handlerPort())), Path: path}
	conn, resp, err := dialer.DialContext(r.Context(), u.String(), nil)
	if err != nil {
		return nil, handlerError(vmi.Name, resp, err)
	}
	return conn, nil
}

// handlerTLSConfig is virt-api's side of the mutual TLS with the handlers, as of now (the
// material rotates).
func (h *Handler) handlerTLSConfig() (*tls.Config, error) {
	material, err := h.HandlerTLS()
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(err.Error())
	}
	tlsConfig, err := handlerapi.ClientConfig(material)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(err.Error())
	}
	return tlsConfig, nil
}

// handlerIP is the address of the ready virt-handler pod on node.
func (h *Handler) handlerIP(r *http.Request, node string) (string, error) {
	pods, err := h.Kube.CoreV1().Pods(h.Namespace).List(r.Context(), metav1.ListOptions{
		LabelSelector: HandlerLabel.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			return p.Status.PodIP, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no virt-handler runs on node %q", node))
}

func (h *Handler) handlerPort() int {
	if h.HandlerPort != 0 {
		return h.HandlerPort
	}
	return handlerapi.Port
}

// handlerError passes on the handler's refusal of a request about the instance name (400,
// 404, 409, 500, 503 with its reason) as a status; without a response, the handler was not
// reached (err).
func handlerError(name string, resp *http.Response, err error) error {
	if resp == nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("virt-handler: %v", err))
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	msg := fmt.Sprintf("virt-handler: %s", strings.TrimSpace(string(body)))
	switch resp.StatusCode {
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(msg)
	case http.StatusNotFound:
		return apierrors.NewNotFound(vmiResource, msg)
	case http.StatusConflict:
		return apierrors.NewConflict(vmiResource, name, errors.New(msg))
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(msg))
	default:
		return apierrors.NewServiceUnavailable(msg)
	}
}
