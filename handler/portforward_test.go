package handler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// fakeGuest stands in for the namespace switch: it records the dial and serves an echo on the
// other end of a pipe, or fails with err.
type fakeGuest struct {
	dials []string
	err   error
}

func (g *fakeGuest) dial(_ context.Context, pid int, podUID types.UID, network string, port int) (net.Conn, error) {
	g.dials = append(g.dials, fmt.Sprintf("%d %s %s/%d", pid, podUID, network, port))
	if g.err != nil {
		return nil, g.err
	}
	guest, handler := net.Pipe()
	go func() { _, _ = io.Copy(guest, guest); guest.Close() }()
	return handler, nil
}

func stubGuest(t *testing.T, g *fakeGuest) {
	old := dialGuestIn
	dialGuestIn = g.dial
	t.Cleanup(func() { dialGuestIn = old })
}

// listenLibvirt makes the pod's libvirt socket, whose peer (this process) is the launcher.
func listenLibvirt(t *testing.T, f *fixture) {
	dir := filepath.Dir(f.private(layout.SocketRel))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The path is too long to bind by name.
	l, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/"+filepath.Base(layout.SocketRel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func runningInstance() *v1.VirtualMachineInstance {
	vmi := newInstance()
	vmi.Status.Phase = v1.Running
	return vmi
}

func TestDialGuestRefusals(t *testing.T) {
	withCacheLag(t, 0)
	target := handlerapi.PortForward{Port: 22, Protocol: handlerapi.TCP}
	for _, tc := range []struct {
		name   string
		vmi    func() *v1.VirtualMachineInstance
		pod    func(*corev1.Pod)
		lookup string
		status int
	}{
		{name: "unknown instance", vmi: runningInstance, lookup: "other", status: http.StatusNotFound},
		{name: "another node's instance", vmi: func() *v1.VirtualMachineInstance {
			vmi := runningInstance()
			vmi.Status.NodeName = "node-b"
			return vmi
		}, status: http.StatusNotFound},
		{name: "scheduled, not running", vmi: newInstance, status: http.StatusConflict},
		{name: "bridge binding", vmi: func() *v1.VirtualMachineInstance {
			vmi := runningInstance()
			vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}}}
			return vmi
		}, status: http.StatusConflict},
		{name: "launcher pod ended", vmi: runningInstance, pod: func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, status: http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := tc.vmi()
			pod := newPod(vmi)
			if tc.pod != nil {
				tc.pod(pod)
			}
			f := newFixture(t, vmi, pod)
			g := &fakeGuest{}
			stubGuest(t, g)
			lookup := "web"
			if tc.lookup != "" {
				lookup = tc.lookup
			}
			_, err := f.c.dialGuest(context.Background(), "ns", lookup, target)
			var refused *streamError
			if !errors.As(err, &refused) || refused.status != tc.status {
				t.Fatalf("err %v, want status %d", err, tc.status)
			}
			if len(g.dials) != 0 {
				t.Errorf("dialled the guest: %v", g.dials)
			}
		})
	}
}

func TestDialGuestRefusedPortIsBadGateway(t *testing.T) {
	vmi := runningInstance()
	f := newFixture(t, vmi, newPod(vmi))
	listenLibvirt(t, f)
	stubGuest(t, &fakeGuest{err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}})
	_, err := f.c.dialGuest(context.Background(), "ns", "web", handlerapi.PortForward{Port: 8080, Protocol: handlerapi.TCP})
	var refused *streamError
	if !errors.As(err, &refused) || refused.status != http.StatusBadGateway || !strings.Contains(err.Error(), "8080") {
		t.Fatalf("err %v, want a 502 naming the port", err)
	}
}

// TestPortForwardStream: a websocket on the handler's path reaches the guest's port through
// the launcher's namespace (pid of the libvirt socket's peer, the pod's UID) and carries bytes
// both ways.
func TestPortForwardStream(t *testing.T) {
	vmi := runningInstance()
	f := newFixture(t, vmi, newPod(vmi))
	listenLibvirt(t, f)
	g := &fakeGuest{}
	stubGuest(t, g)
	s := &StreamServer{Controller: f.c}
	mux := http.NewServeMux()
	mux.HandleFunc(handlerapi.PortForwardPattern, s.portForward)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	url := "ws" + strings.TrimPrefix(srv.URL, "http") + handlerapi.PortForwardPath("ns", "web", handlerapi.PortForward{Port: 80, Protocol: handlerapi.UDP})
	d := websocket.Dialer{Subprotocols: []string{handlerapi.PortForwardProtocol}}
	conn, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.Subprotocol() != handlerapi.PortForwardProtocol {
		t.Errorf("subprotocol %q", conn.Subprotocol())
	}
	if err := conn.WriteMessage(websocket.BinaryMessage, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	_, got, err := conn.ReadMessage()
	if err != nil || string(got) != "ping" {
		t.Fatalf("read %q, %v; want the echo", got, err)
	}
	want := fmt.Sprintf("%d %s udp/80", os.Getpid(), testPodUID)
	if len(g.dials) != 1 || g.dials[0] != want {
		t.Errorf("dials %v, want [%s]", g.dials, want)
	}

	// A bad protocol never reaches the guest.
	bad := strings.Replace(url, "/udp", "/sctp", 1)
	if _, resp, err := d.Dial(bad, nil); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("protocol sctp: %v, want a 400", err)
	}
}
