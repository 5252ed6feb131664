package vmctl

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/examples"
	"github.com/vmctl/vmctl/vmctl"
)

// env is one test's namespace with vmctl's example RBAC, a pod on a (fake) node and a
// kubeconfig acting as vmctl's ServiceAccount.
type env struct {
	t          *testing.T
	ns         string
	pod        *corev1.Pod
	kubeconfig string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmctl-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	e := &env{t: t, ns: ns.Name}
	e.create(example(t, "vmctl-rbac.yaml")...)
	if err := apiserver.WaitDefaultServiceAccount(ctx, kube, e.ns); err != nil {
		t.Fatal(err)
	}
	e.pod, err = kube.CoreV1().Pods(e.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "vmctl-7c9f8d6b5-x2x4q"},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: "vmctl",
			Containers: []corev1.Container{{Name: "vmctl", Image: "vmctl/vmctl:devel"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + e.ns + ":vmctl"
	// vmctl takes a Forbidden reading its pod as final: wait until RBAC has loaded its Role.
	if err := apiserver.WaitAllowed(ctx, kube, user, apiserver.ServiceAccountGroups(e.ns),
		authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "get", Resource: "pods"}); err != nil {
		t.Fatal(err)
	}
	e.kubeconfig = impersonating(t, user)
	return e
}

// impersonating writes a kubeconfig of the server's admin acting as user.
func impersonating(t *testing.T, user string) string {
	cfg, err := clientcmd.LoadFromFile(server.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// start runs vmctl for the env's pod until the returned stop is called; stop returns Run's error.
func (e *env) start(opts vmctl.Options) (stop func() error) {
	opts.Prototype, opts.HostnameOverride, opts.Kubeconfig = "testvm", e.pod.Name, e.kubeconfig
	if opts.Namespace == "" {
		opts.Namespace = e.ns
	}
	opts.PrototypeBackoffMax = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- vmctl.Run(ctx, opts) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	e.t.Cleanup(func() { _ = stop() })
	return stop
}

func (e *env) create(objs ...runtime.Object) {
	e.t.Helper()
	if err := examples.Create(context.Background(), kube, virt, e.ns, objs...); err != nil {
		e.t.Fatal(err)
	}
}

// eventually polls cond for up to 30 s.
func (e *env) eventually(what string, cond func(ctx context.Context) bool) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		e.t.Fatalf("timed out waiting for %s", what)
	}
}

// event is the message of the pod's first event with that reason, or "".
func (e *env) event(ctx context.Context, reason string) string {
	events, err := kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
	if err != nil || len(events.Items) == 0 {
		return ""
	}
	return events.Items[0].Message
}

func (e *env) clone(ctx context.Context) (*v1.VirtualMachine, error) {
	return virt.KubevirtV1().VirtualMachines(e.ns).Get(ctx, vmctl.CloneName("testvm", e.pod.Name), metav1.GetOptions{})
}

// example decodes a manifest of examples/.
func example(t *testing.T, name string) []runtime.Object {
	t.Helper()
	objs, err := examples.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
