package framework

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/apiserver"
)

// OutOfServiceTaint is how an operator confirms that a node is down for good (Kubernetes'
// non-graceful node shutdown): the pod garbage collector then removes its terminating pods,
// and only then do its VMs start elsewhere (docs/nodes.md).
var OutOfServiceTaint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// RealNodes are the nodes that run containers (kwok's simulated ones left out), by name. The
// test is skipped when there are fewer than want (make cluster-up REAL_NODES=2 gives two).
func (f *Framework) RealNodes(want int) []corev1.Node {
	f.t.Helper()
	nodes, err := f.Kube.CoreV1().Nodes().List(f.Context(), metav1.ListOptions{LabelSelector: "type!=kwok"})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(nodes.Items) < want {
		f.t.Skipf("%d real nodes, this test needs %d (make cluster-up REAL_NODES=%d)", len(nodes.Items), want, want)
	}
	slices.SortFunc(nodes.Items, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes.Items
}

// LoseNode kills a node of the local cluster as a power cut would: its kubelet, containerd,
// kube-proxy and every process of its pods (hack/cluster/node.sh stop). When the test ends the
// node is brought back and the out-of-service taint, if any, removed, so later tests find two
// nodes again.
func (f *Framework) LoseNode(name string) {
	f.t.Helper()
	f.nodeScript("stop", name)
	f.t.Cleanup(func() { f.RestoreNode(name) })
}

// RestoreNode starts a lost node again, removes the out-of-service taint and waits until the
// node is Ready and its virt-handler has marked it schedulable.
func (f *Framework) RestoreNode(name string) {
	f.t.Helper()
	f.nodeScript("start", name)
	f.setOutOfService(name, false)
	f.Eventually(3*time.Minute, "node "+name+" Ready and schedulable", func(ctx context.Context) (bool, error) {
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && NodeReady(node) && node.Labels[v1.SchedulableLabel] == "true", err
	})
}

// ConfirmNodeDown plays the operator who knows the node is down: once Kubernetes sees it
// NotReady, it taints the node out-of-service.
func (f *Framework) ConfirmNodeDown(name string, timeout time.Duration) {
	f.t.Helper()
	f.Eventually(timeout, "node "+name+" NotReady", func(ctx context.Context) (bool, error) {
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && !NodeReady(node), err
	})
	f.setOutOfService(name, true)
}

func (f *Framework) setOutOfService(name string, on bool) {
	f.t.Helper()
	arg := OutOfServiceTaint.ToString()
	if !on {
		arg = OutOfServiceTaint.Key + "-"
	}
	if out, err := f.KubectlAs(f.Kubeconfig, "", "taint", "node", name, arg); err != nil && on {
		f.t.Fatalf("kubectl taint node %s %s: %v\n%s", name, arg, err, out)
	}
}

func (f *Framework) nodeScript(verb, name string) {
	f.t.Helper()
	root, err := apiserver.RepoRoot()
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "cluster", "node.sh"), verb, name).CombinedOutput()
	if err != nil {
		f.t.Fatalf("hack/cluster/node.sh %s %s: %v\n%s", verb, name, err, out)
	}
}

// NodeReady says whether the node's Ready condition is True.
func NodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SampleGuests counts, every half second until the test ends, the QEMU processes on this
// machine (every node of the local cluster shares its process table) that run each named VM's
// domain; the returned func gives the most seen at once per VM. A VM must never run twice.
func (f *Framework) SampleGuests(vms ...string) func() map[string]int {
	var mu sync.Mutex
	most := map[string]int{}
	ctx := f.Context()
	go func() {
		for ctx.Err() == nil {
			counts := qemuCounts(f.Namespace, vms)
			mu.Lock()
			for vm, n := range counts {
				most[vm] = max(most[vm], n)
			}
			mu.Unlock()
			time.Sleep(500 * time.Millisecond)
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(most)
	}
}

// qemuCounts counts the qemu processes running each VM's domain, per VM.
func qemuCounts(namespace string, vms []string) map[string]int {
	counts := map[string]int{}
	for vm, lines := range qemuCommandLines(namespace) {
		if slices.Contains(vms, vm) {
			counts[vm] = len(lines)
		}
	}
	return counts
}

// QEMUCommandLine is the command line, arguments joined by spaces, of the QEMU running the
// VM's domain in the test's namespace; "" if none runs.
func (f *Framework) QEMUCommandLine(vm string) string {
	if lines := qemuCommandLines(f.Namespace)[vm]; len(lines) > 0 {
		return lines[0]
	}
	return ""
}

// qemuCommandLines are the command lines of the qemu processes running the namespace's
// domains (libvirt names each on its command line: -name guest=<layout.DomainName>,...), by VM.
func qemuCommandLines(namespace string) map[string][]string {
	lines := map[string][]string{}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range paths {
		cmdline, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(cmdline, []byte("qemu-system")) {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		for _, arg := range args {
			name, ok := strings.CutPrefix(arg, "guest=")
			name, _, _ = strings.Cut(name, ",")
			if vm, inNamespace := strings.CutPrefix(name, layout.DomainName(namespace, "")); ok && inNamespace {
				lines[vm] = append(lines[vm], strings.Join(args, " "))
			}
		}
	}
	return lines
}
