// Package framework is what every e2e test stands on: clients for the local cluster, a fresh
// namespace per test, waiting, and a dump of what happened when a test fails.
package framework

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
)

// RestrictedLabel is Pod Security admission's enforce label.
const RestrictedLabel = "pod-security.kubernetes.io/enforce"

// Restricted is a container security context that passes Pod Security "restricted", for the
// suite's own client pods.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To[int64](65532),
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// ProjectNamespace is where manifests/ installs the project's components.
const ProjectNamespace = "kubevirt"

// Framework is one test's view of the cluster.
type Framework struct {
	t         *testing.T
	Config    *rest.Config
	Kube      kubernetes.Interface
	Virt      versioned.Interface
	Namespace string
	// Kubeconfig is the file Config came from, for kubectl.
	Kubeconfig string
}

// New connects to the cluster of $KUBECONFIG (default: the local cluster's, _cluster/kubeconfig)
// and creates a namespace for the test. When the test ends the namespace is dumped if the test
// failed, then deleted.
func New(t *testing.T) *Framework {
	t.Helper()
	path, err := kubeconfigPath()
	if err != nil {
		t.Fatalf("cluster config: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("cluster config: %v", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	f := &Framework{t: t, Config: cfg, Kubeconfig: path}
	if f.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if f.Virt, err = versioned.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	ns, err := f.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name()), Labels: map[string]string{
			"vmctl.io/e2e": "true",
			// Tenants' namespaces may enforce the strictest level: everything the suite runs
			// there (launcher pods, vmctl, test clients) must pass it.
			RestrictedLabel: "restricted",
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create test namespace: %v", err)
	}
	f.Namespace = ns.Name
	t.Cleanup(func() {
		f.checkNoDNSWarnings()
		if t.Failed() {
			f.Dump(f.Namespace)
			f.Dump(ProjectNamespace)
		}
		if err := f.Kube.CoreV1().Namespaces().Delete(context.Background(), f.Namespace, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete namespace %s: %v", f.Namespace, err)
		}
	})
	return f
}

// kubeconfigPath is $KUBECONFIG, else the local cluster's _cluster/kubeconfig.
func kubeconfigPath() (string, error) {
	if path := os.Getenv("KUBECONFIG"); path != "" {
		return path, nil
	}
	root, err := apiserver.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "_cluster", "kubeconfig"), nil
}

// Kubectl runs kubectl in the test's namespace and returns its output, failing the test
// when it fails: tests show what a user would type.
func (f *Framework) Kubectl(args ...string) string {
	f.t.Helper()
	kubectl, err := apiserver.Tool("kubectl")
	if err != nil {
		f.t.Fatal(err)
	}
	cmd := exec.CommandContext(f.Context(), kubectl, append([]string{"--kubeconfig", f.Kubeconfig, "-n", f.Namespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespacePrefix turns a test name into a readable namespace prefix: e2e-<test>-.
func namespacePrefix(testName string) string {
	name := notDNS.ReplaceAllString(strings.ToLower(testName), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	return "e2e-" + strings.Trim(name, "-") + "-"
}

// Context is a context for one step of a test, ended with the test.
func (f *Framework) Context() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	return ctx
}

// Eventually polls condition every 250ms until it returns true, failing the test with what
// was awaited after timeout. An error from condition is remembered and reported, not fatal.
func (f *Framework) Eventually(timeout time.Duration, what string, condition func(ctx context.Context) (bool, error)) {
	f.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(f.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, err := condition(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return done, nil
	})
	if err != nil {
		f.t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
}

// checkNoDNSWarnings fails the test when the kubelet warned that a pod of its namespace had
// no cluster DNS to use (MissingClusterDNS): every pod, launcher pods included, must get it.
func (f *Framework) checkNoDNSWarnings() {
	events, err := f.Kube.CoreV1().Events(f.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=MissingClusterDNS"})
	if err != nil {
		f.t.Logf("list events: %v", err)
		return
	}
	for _, e := range events.Items {
		f.t.Errorf("%s %s: %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}
