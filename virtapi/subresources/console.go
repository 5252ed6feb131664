package subresources

import (
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// ConsoleProtocol is the websocket subprotocol of the console stream: raw bytes of the serial
// line in binary messages both ways (KubeVirt's name for it).
const ConsoleProtocol = "plain.kubevirt.io"

// ComputeContainer is the launcher pod's main container, where libvirtd and QEMU run.
const ComputeContainer = "compute"

var vmiResource = schema.GroupResource{Group: v1.GroupName, Resource: "virtualmachineinstances"}

var upgrader = websocket.Upgrader{
	Subprotocols: []string{ConsoleProtocol},
	// The apiserver authenticated and authorized the user and proxies the upgrade to us; a
	// browser origin means nothing here.
	CheckOrigin: func(*http.Request) bool { return true },
}

// ServeConsole handles GET console of the instance namespace/name: a websocket bridged to
// `virt-launcher console` exec'ed in the launcher pod's compute container.
func (h *Handler) ServeConsole(w http.ResponseWriter, r *http.Request, namespace, name string) {
	ctx := r.Context()
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	// Scheduled too, not only Running: a user attaching while the guest starts sees it
	// boot (the launcher side waits for the domain's pty).
	if p := vmi.Status.Phase; p != v1.Running && p != v1.Scheduled {
		writeStatus(w, apierrors.NewConflict(vmiResource, name, fmt.Errorf("the instance is %q, not Scheduled or Running", p)))
		return
	}
	pod, err := h.launcherPod(r, vmi)
	if err != nil {
		writeStatus(w, err)
		return
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered already
	}
	defer conn.Close()
	klog.InfoS("console attached", "vmi", klog.KObj(vmi), "pod", pod)

	req := h.Kube.CoreV1().RESTClient().Post().Namespace(namespace).Resource("pods").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: ComputeContainer,
			Command:   []string{"/usr/bin/virt-launcher", "console", "--name", vmi.Name, "--namespace", vmi.Namespace},
			Stdin:     true, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec)
	exec, err := newExecutor(h, req.URL().String())
	if err == nil {
		ws := &wsStream{conn: conn}
		err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: ws, Stdout: ws, Stderr: ws})
	}
	msg := "console closed"
	if err != nil {
		msg = "console: " + err.Error()
		klog.InfoS("console ended", "vmi", klog.KObj(vmi), "err", err)
	}
	_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, truncate(msg, 120)))
}

// newExecutor prefers the websocket exec protocol and falls back to SPDY, as kubectl does.
func newExecutor(h *Handler, url string) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(h.Config, "GET", url)
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(h.Config, "POST", mustParse(url))
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool { return true })
}

func (h *Handler) launcherPod(r *http.Request, vmi *v1.VirtualMachineInstance) (string, error) {
	pods, err := h.Kube.CoreV1().Pods(vmi.Namespace).List(r.Context(), metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
	if err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p.Name, nil
		}
	}
	return "", apierrors.NewConflict(vmiResource, vmi.Name, fmt.Errorf("no running launcher pod"))
}

// wsStream is the client's websocket as the exec's stdin and stdout: binary messages carry
// the bytes. Reads end with io.EOF when the client closes, which closes the exec's stdin and
// so ends `virt-launcher console`.
type wsStream struct {
	conn    *websocket.Conn
	pending io.Reader
	mu      sync.Mutex // gorilla allows one concurrent writer; stdout and stderr are two
}

func (s *wsStream) Read(p []byte) (int, error) {
	for {
		if s.pending != nil {
			n, err := s.pending.Read(p)
			if err != io.EOF || n > 0 {
				return n, nil
			}
			s.pending = nil
		}
		_, r, err := s.conn.NextReader()
		if err != nil {
			return 0, io.EOF
		}
		s.pending = r
	}
}

func (s *wsStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.conn.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
