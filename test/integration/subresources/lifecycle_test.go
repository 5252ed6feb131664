package subresources

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/virtapi/certs"
	"github.com/vmctl/vmctl/virtapi/subresources"
)

// nodeHandler stands in for a virt-handler's stream server: the mutual TLS as the real one
// sets it up (virt-api's Secrets, read by handler.SecretCerts), answering 200 to everything
// and recording what it was asked.
type nodeHandler struct {
	mu   sync.Mutex
	got  []string
	port int
}

func (n *nodeHandler) asked() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.got, ",")
}

func startNodeHandler(t *testing.T, ns string) *nodeHandler {
	n := &nodeHandler{}
	material := handler.SecretCerts(kube, ns, "virt-handler-certs")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.got = append(n.got, r.Method+" "+r.URL.Path)
		n.mu.Unlock()
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13, GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		m, err := material(hello.Context())
		if err != nil {
			return nil, err
		}
		return handlerapi.ServerConfig(m)
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n.port, _ = strconv.Atoi(port)
	return n
}

// handlerPodOn creates a running virt-handler pod on node at ip, as the kubelet would report it.
func handlerPodOn(t *testing.T, ns, node, ip string) {
	ctx := context.Background()
	pod, err := kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "virt-handler-", Labels: subresources.HandlerLabel},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "virt-handler", Image: "x"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}
	if _, err := kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runningInstance creates an instance Running on node, as the handler reports it.
func runningInstance(t *testing.T, ns, node string) {
	ctx := context.Background()
	vmi, err := virt.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Status.Phase, vmi.Status.NodeName = v1.Running, node
	if _, err := virt.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// reportPaused writes the Paused condition the handler reports once the domain is paused.
func reportPaused(t *testing.T, ns string) {
	ctx := context.Background()
	vmi, err := virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue, Reason: handler.ReasonPausedByUser}}
	if _, err := virt.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycleReachesTheHandlerOfTheInstancesNode: pause, unpause and soft reboot go, over
// the mutual TLS virt-api keeps in its Secrets, to the handler pod of the instance's node
// (found by field selector among several), or come back 409 from virt-api's own checks; a
// dry run reaches no handler.
func TestLifecycleReachesTheHandlerOfTheInstancesNode(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	hc := &certs.HandlerCerts{Kube: kube, Namespace: ns, CASecret: "virt-handler-ca", ServerSecret: "virt-handler-certs"}
	if err := hc.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	node := startNodeHandler(t, ns)
	// Another node's handler at an address nothing listens on: picking it would fail.
	handlerPodOn(t, ns, "node-b", "127.0.0.2")
	handlerPodOn(t, ns, "node-a", "127.0.0.1")
	h := &subresources.Handler{Virt: virt, Kube: kube, Namespace: ns, HandlerTLS: hc.Client, HandlerPort: node.port}
	put := func(op handlerapi.Operation, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeInstance(rec, httptest.NewRequest(http.MethodPut, "/", strings.NewReader(body)), ns, "web", op)
		return rec.Code, rec.Body.String()
	}

	runningInstance(t, ns, "node-a")
	if code, body := put(handlerapi.Pause, `{"dryRun":["All"]}`); code != http.StatusOK || node.asked() != "" {
		t.Fatalf("dry run: %d %s; the handler got %q", code, body, node.asked())
	}
	if code, body := put(handlerapi.Unpause, ""); code != http.StatusConflict || !strings.Contains(body, "VMI is not paused") {
		t.Fatalf("unpause of a running instance: %d %s", code, body)
	}
	for _, op := range []handlerapi.Operation{handlerapi.Pause, handlerapi.SoftReboot} {
		if code, body := put(op, ""); code != http.StatusOK {
			t.Fatalf("%s: %d %s", op, code, body)
		}
	}
	want := "PUT /v1/namespaces/" + ns + "/virtualmachineinstances/web/pause,PUT /v1/namespaces/" + ns + "/virtualmachineinstances/web/softreboot"
	if got := node.asked(); got != want {
		t.Fatalf("the handler got %q, want %q", got, want)
	}

	// Once the handler reports the pause, a second one is refused before reaching it.
	reportPaused(t, ns)
	if code, body := put(handlerapi.Pause, ""); code != http.StatusConflict || !strings.Contains(body, "VMI is already paused") {
		t.Fatalf("pause of a paused instance: %d %s", code, body)
	}
	if code, body := put(handlerapi.SoftReboot, ""); code != http.StatusConflict || !strings.Contains(body, "VMI is paused") {
		t.Fatalf("soft reboot of a paused instance: %d %s", code, body)
	}
	if code, body := put(handlerapi.Unpause, ""); code != http.StatusOK {
		t.Fatalf("unpause: %d %s", code, body)
	}
	if got := node.asked(); !strings.HasSuffix(got, "/web/unpause") || strings.Count(got, ",") != 2 {
		t.Fatalf("the handler got %q", got)
	}
}
