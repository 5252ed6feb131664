package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/examples"
	"github.com/vmctl/vmctl/vmctl"
)

// VmctlPrototypeLabel is the label vmctl puts on every clone, naming its prototype.
const VmctlPrototypeLabel = vmctl.PrototypeLabel

// Example reads a manifest of examples/ as typed objects, so a test can adjust one (a
// namespace, a toleration) before creating it, and otherwise uses exactly what users apply.
func (f *Framework) Example(name string) []runtime.Object {
	f.t.Helper()
	objs, err := examples.Load(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return objs
}

// CreateObjects creates example objects in the test's namespace. RoleBinding subjects naming
// the examples' namespace (default) are moved to the test's.
func (f *Framework) CreateObjects(objs ...runtime.Object) {
	f.t.Helper()
	if err := examples.Create(f.Context(), f.Kube, f.Virt, f.Namespace, objs...); err != nil {
		f.t.Fatal(err)
	}
}

// Clones lists the VMs vmctl cloned from prototype, leaving out those being deleted.
func (f *Framework) Clones(ctx context.Context, prototype string) ([]v1.VirtualMachine, error) {
	vms, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: VmctlPrototypeLabel + "=" + prototype})
	if err != nil {
		return nil, err
	}
	var live []v1.VirtualMachine
	for _, vm := range vms.Items {
		if vm.DeletionTimestamp == nil {
			live = append(live, vm)
		}
	}
	return live, nil
}

// LivePods lists the pods matching selector that are not being deleted.
func (f *Framework) LivePods(ctx context.Context, selector string) ([]corev1.Pod, error) {
	pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live, nil
}

// WaitNothingLeft waits until no VM, VMI or launcher pod of prototype's clones exists at all,
// terminating ones included.
func (f *Framework) WaitNothingLeft(prototype string, timeout time.Duration) {
	f.t.Helper()
	selector := metav1.ListOptions{LabelSelector: VmctlPrototypeLabel + "=" + prototype}
	f.Eventually(timeout, "every clone of "+prototype+", its instance and launcher pod to be gone", func(ctx context.Context) (bool, error) {
		vms, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).List(ctx, selector)
		if err != nil {
			return false, err
		}
		vmis, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).List(ctx, selector)
		if err != nil {
			return false, err
		}
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, selector)
		if err != nil {
			return false, err
		}
		if n := len(vms.Items) + len(vmis.Items) + len(pods.Items); n > 0 {
			return false, fmt.Errorf("%d VMs, %d VMIs, %d launcher pods left", len(vms.Items), len(vmis.Items), len(pods.Items))
		}
		return true, nil
	})
}

// VmctlPID finds the host process of the vmctl container of a pod (the local cluster runs
// on this machine): the vmctl binary whose environment names the pod.
func VmctlPID(podName string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	want := []byte("POD_NAME=" + podName + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "vmctl" {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append(env, 0), want) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no vmctl process for pod %s", podName)
}

// WaitClonesRunning waits until every live pod matching selector has its clone
// <prototype>-<pod>, whose instance runs on the pod's node, and there are no other clones.
func (f *Framework) WaitClonesRunning(prototype, selector string, want int, timeout time.Duration) []corev1.Pod {
	f.t.Helper()
	var pods []corev1.Pod
	f.Eventually(timeout, fmt.Sprintf("%d pods with running clones", want), func(ctx context.Context) (bool, error) {
		var err error
		if pods, err = f.LivePods(ctx, selector); err != nil || len(pods) != want {
			return false, fmt.Errorf("%d pods (%v)", len(pods), err)
		}
		clones, err := f.Clones(ctx, prototype)
		if err != nil || len(clones) != want {
			return false, fmt.Errorf("%d clones (%v)", len(clones), err)
		}
		for _, pod := range pods {
			name := vmctl.CloneName(prototype, pod.Name)
			vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if vmi.Status.Phase != v1.Running || vmi.Status.NodeName != pod.Spec.NodeName {
				return false, fmt.Errorf("VMI %s is %s on %q, pod on %s", name, vmi.Status.Phase, vmi.Status.NodeName, pod.Spec.NodeName)
			}
		}
		return true, nil
	})
	return pods
}

// SampleReadyClones counts the Ready clones of prototype every 250 ms from now until the
// test ends; the returned func gives the fewest seen.
func (f *Framework) SampleReadyClones(prototype string) func() int {
	var mu sync.Mutex
	fewest := -1
	ctx := f.Context()
	go func() {
		for ctx.Err() == nil {
			if vms, err := f.Clones(ctx, prototype); err == nil {
				ready := 0
				for _, vm := range vms {
					if vm.Status.Ready {
						ready++
					}
				}
				mu.Lock()
				if fewest < 0 || ready < fewest {
					fewest = ready
				}
				mu.Unlock()
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return fewest
	}
}

// PodHasEvent says whether an event with that reason was recorded on the pod.
func (f *Framework) PodHasEvent(ctx context.Context, pod, reason string) bool {
	n, err := f.PodEvents(ctx, pod, reason)
	return err == nil && n > 0
}

// PodEvents is how often an event with that reason was recorded on the pod (a repeated event
// is one object whose count rises).
func (f *Framework) PodEvents(ctx context.Context, pod, reason string) (int, error) {
	events, err := f.Kube.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", pod), fields.OneTermEqualSelector("reason", reason)).String()})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events.Items {
		n += int(max(e.Count, 1))
	}
	return n, nil
}

// PinnedNode is the node a clone's required node affinity names by metadata.name.
func PinnedNode(vm *v1.VirtualMachine) string {
	a := vm.Spec.Template.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, req := range term.MatchFields {
			if req.Key == "metadata.name" && len(req.Values) == 1 {
				return req.Values[0]
			}
		}
	}
	return ""
}

// AllScheduled says whether every pod is bound to a node.
func AllScheduled(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			return false
		}
	}
	return true
}
