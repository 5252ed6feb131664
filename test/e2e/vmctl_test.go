//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// vmctlTimeout bounds waits that include booting guests: a few TCG guests at once on two
// cores take minutes, not seconds.
const vmctlTimeout = 5 * time.Minute

// TestVmctlDeployment drives VMs with the example Deployment: scaled 0 -> 3 the clones follow
// and run on their pods' node, the Service reaches their guests, a killed vmctl adopts its
// clone, a force-deleted pod's clone is garbage-collected, a rollout waits for the new VMs,
// and 3 -> 0 leaves nothing behind.
func TestVmctlDeployment(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(f.Example("service.yaml")...)
	deploy := f.Example("vmctl-deployment.yaml")
	deploy[0].(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](0)
	f.CreateObjects(deploy...)

	f.Kubectl("scale", "deployment/vmctl", "--replicas=3")
	f.WaitDeploymentReady(f.Namespace, "vmctl", vmctlTimeout)
	pods := f.WaitClonesRunning("testvm", "app=vmctl", 3, vmctlTimeout)

	t.Run("the Service answers from every clone's guest", func(t *testing.T) {
		serviceAnswersFrom(t, f, "testvm", clonesOf("testvm", pods))
	})

	t.Run("a pod waiting for its VM fails its readiness probe once a minute, and turns Ready with its VM", func(t *testing.T) {
		for _, pod := range pods {
			waited, failures, ready := readinessWait(t, f, pod.Name)
			// The example probes /readyz?wait=60s every 10 s: each failure held its answer 60 s.
			// A probe answering at once would have failed once a period.
			if most := int(waited/time.Minute) + 2; failures > most {
				t.Errorf("pod %s: %d failed readiness probes in the %s before it was Ready, want at most %d", pod.Name, failures, waited.Round(time.Second), most)
			}
			// The held probe answers when the VM turns Ready, not at the next period: a probe
			// answering at once would lag its VM by up to 10 s, half the time by more than 5.
			vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm", pod.Name), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var vmReady time.Time
			for _, c := range vm.Status.Conditions {
				if c.Type == v1.VirtualMachineReady && c.Status == corev1.ConditionTrue {
					vmReady = c.LastTransitionTime.Time
				}
			}
			if lag := ready.Sub(vmReady); vmReady.IsZero() || lag > 5*time.Second {
				t.Errorf("pod %s turned Ready at %s, its VM at %s: want the pod within seconds, not at the probe's next period", pod.Name, ready, vmReady)
			}
			t.Logf("pod %s: Ready %s after its container started and %s after its VM, %d failed readiness probes",
				pod.Name, waited.Round(time.Second), ready.Sub(vmReady), failures)
		}
	})

	t.Run("kill -9 of vmctl: the restarted container adopts its clone", func(t *testing.T) {
		pod := pods[0]
		clone := f.WaitVMStatus(vmctl.CloneName("testvm", pod.Name), v1.VirtualMachineStatusRunning, 10*time.Second)
		pid, err := framework.VmctlPID(pod.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		f.Eventually(time.Minute, "vmctl to restart, adopt its clone and be ready", func(ctx context.Context) (bool, error) {
			got, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil || len(got.Status.ContainerStatuses) == 0 {
				return false, err
			}
			cs := got.Status.ContainerStatuses[0]
			return cs.RestartCount > 0 && cs.Ready && f.PodHasEvent(ctx, pod.Name, vmctl.ReasonCloneAdopted), nil
		})
		if now := f.WaitVMStatus(clone.Name, v1.VirtualMachineStatusRunning, 10*time.Second); now.UID != clone.UID {
			t.Errorf("the clone was replaced across vmctl's restart")
		}
	})

	t.Run("force-deleting a pod with grace 0 garbage-collects its clone", func(t *testing.T) {
		// The pod whose vmctl restarted once: killed again, the kubelet holds its restart
		// back for 10 s, so no vmctl is left to delete the clone: only the garbage collector,
		// following the clone's ownerReference, can.
		pod := pods[0]
		name := vmctl.CloneName("testvm", pod.Name)
		pid, err := framework.VmctlPID(pod.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		f.Kubectl("delete", "pod", pod.Name, "--grace-period=0", "--force")
		start := time.Now()
		waitVMGone(t, f, name)
		t.Logf("clone of the force-deleted pod garbage-collected in %s", time.Since(start).Round(100*time.Millisecond))
		f.WaitDeploymentReady(f.Namespace, "vmctl", vmctlTimeout)
		pods = f.WaitClonesRunning("testvm", "app=vmctl", 3, vmctlTimeout)
	})

	t.Run("a prototype change rolls out one clone at a time, waiting for each VM", func(t *testing.T) {
		minReady := f.SampleReadyClones("testvm")
		// The way README documents: change the prototype, then put its generation in the pod
		// template, which rolls the Deployment.
		f.Kubectl("patch", "vm", "testvm", "--type=merge", "-p", `{"spec":{"template":{"metadata":{"labels":{"version":"v2"}}}}}`)
		proto, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), "testvm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gen := fmt.Sprint(proto.Generation)
		f.Kubectl("patch", "deployment/vmctl", "-p", fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, vmctl.PrototypeGenerationAnnotation, gen))
		start := time.Now()
		f.Kubectl("rollout", "status", "deployment/vmctl", "--timeout=10m")
		took := time.Since(start)
		// No waiting here: when rollout status returns, every new pod's VM already runs, and
		// it is made from the changed prototype.
		newPods, err := f.LivePods(f.Context(), "app=vmctl")
		if err != nil {
			t.Fatal(err)
		}
		rolled := 0
		for _, pod := range newPods {
			if pod.Annotations[vmctl.PrototypeGenerationAnnotation] != gen {
				continue
			}
			rolled++
			name := vmctl.CloneName("testvm", pod.Name)
			vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
			if err != nil || !vm.Status.Ready || vm.Status.PrintableStatus != v1.VirtualMachineStatusRunning {
				t.Errorf("rollout status returned before clone %s ran: %v %+v", name, err, vm)
				continue
			}
			vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
			if err != nil || vmi.Labels["version"] != "v2" || vm.Annotations[vmctl.PrototypeGenerationAnnotation] != gen {
				t.Errorf("clone %s is not made from generation %s of the prototype: %v", name, gen, err)
			}
		}
		if rolled != 3 {
			t.Errorf("%d pods of the new template, want 3", rolled)
		}
		t.Logf("rollout of 3 VMs took %s; fewest Ready clones during it: %d", took.Round(time.Second), minReady())
		if n := minReady(); n < 3 {
			t.Errorf("only %d clones were Ready at one point of the rollout, want at least 3 (maxUnavailable 0)", n)
		}
		f.Eventually(vmctlTimeout, "the old clones to go", func(ctx context.Context) (bool, error) {
			vms, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: framework.VmctlPrototypeLabel + "=testvm"})
			return err == nil && len(vms.Items) == 3, err
		})
		pods = f.WaitClonesRunning("testvm", "app=vmctl", 3, vmctlTimeout)
	})

	// 3 -> 0: the clones, their instances and launcher pods all go.
	f.Kubectl("scale", "deployment/vmctl", "--replicas=0")
	f.WaitNothingLeft("testvm", vmctlTimeout)
}

// TestVmctlDaemonSet: the example DaemonSet makes one clone per node, each pinned to its node.
// It starts before its prototype exists: vmctl waits, says so, and clones once it appears.
// Fake kwok nodes run no containers, so this test runs vmctl itself for their pods (real
// guests run on the real node only).
func TestVmctlDaemonSet(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	ds := f.Example("vmctl-daemonset.yaml")[0].(*appsv1.DaemonSet)
	ds.Spec.Template.Spec.Tolerations = append(ds.Spec.Template.Spec.Tolerations,
		corev1.Toleration{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	f.CreateObjects(ds)

	var pods []corev1.Pod
	f.Eventually(2*time.Minute, "a vmctl pod on every node", func(ctx context.Context) (bool, error) {
		got, err := f.Kube.AppsV1().DaemonSets(f.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		if err != nil || got.Status.DesiredNumberScheduled == 0 {
			return false, err
		}
		pods, err = f.LivePods(ctx, "app=vmctl-ds")
		return err == nil && len(pods) == int(got.Status.DesiredNumberScheduled) && framework.AllScheduled(pods), err
	})
	ctx, stop := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { stop(); running.Wait() }()
	var real *corev1.Pod
	for i, pod := range pods {
		node, err := f.Kube.CoreV1().Nodes().Get(f.Context(), pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Labels["type"] != "kwok" {
			real = &pods[i]
			continue
		}
		opts := vmctl.Options{Prototype: "testvm", Namespace: f.Namespace, HostnameOverride: pod.Name, Kubeconfig: f.Kubeconfig, PrototypeBackoffMax: 5 * time.Second}
		running.Go(func() {
			if err := vmctl.Run(ctx, opts); err != nil {
				t.Errorf("vmctl for %s: %v", opts.HostnameOverride, err)
			}
		})
	}
	if real == nil {
		t.Fatal("no vmctl pod on the real node")
	}
	t.Logf("%d nodes: %d fake, %s real", len(pods), len(pods)-1, real.Spec.NodeName)

	f.Eventually(time.Minute, "vmctl to report the missing prototype", func(ctx context.Context) (bool, error) {
		return f.PodHasEvent(ctx, real.Name, vmctl.ReasonPrototypeUnavailable), nil
	})
	f.CreateObjects(f.Example("prototype-vm.yaml")...)

	f.Eventually(2*time.Minute, "one clone per node", func(ctx context.Context) (bool, error) {
		vms, err := f.Clones(ctx, "testvm")
		return err == nil && len(vms) == len(pods), err
	})
	for _, pod := range pods {
		vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm", pod.Name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node := framework.PinnedNode(vm); node != pod.Spec.NodeName {
			t.Errorf("clone %s pinned to %q, its pod runs on %s", vm.Name, node, pod.Spec.NodeName)
		}
	}
	f.WaitDaemonSetReady(f.Namespace, ds.Name, vmctlTimeout)
	vmi := f.WaitVMIPhase(vmctl.CloneName("testvm", real.Name), v1.Running, 10*time.Second)
	if vmi.Status.NodeName != real.Spec.NodeName {
		t.Errorf("the real node's clone runs on %s, want %s", vmi.Status.NodeName, real.Spec.NodeName)
	}

	// The fake nodes' vmctl end like a SIGTERMed one: they delete their clones. The real
	// node's clone goes with its pod, by its ownerReference or vmctl's own teardown.
	stop()
	running.Wait()
	f.Kubectl("delete", "daemonset", ds.Name)
	f.WaitNothingLeft("testvm", vmctlTimeout)
}

// clonesOf maps each pod to its clone's name, the hostname its guest answers with.
func clonesOf(prototype string, pods []corev1.Pod) map[string]string {
	clones := map[string]string{}
	for _, pod := range pods {
		clones[pod.Name] = vmctl.CloneName(prototype, pod.Name)
	}
	return clones
}

// readinessWait is how long a Ready pod's container ran before the pod turned Ready, how
// many readiness probes the kubelet recorded as failed (Unhealthy events), and when it turned
// Ready.
func readinessWait(t *testing.T, f *framework.Framework, name string) (time.Duration, int, time.Time) {
	t.Helper()
	pod, err := f.Kube.CoreV1().Pods(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var started, ready time.Time
	if cs := pod.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Running != nil {
		started = cs[0].State.Running.StartedAt.Time
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = c.LastTransitionTime.Time
		}
	}
	if started.IsZero() || ready.IsZero() {
		t.Fatalf("pod %s is not Ready with a running container: %+v", name, pod.Status)
	}
	failures, err := f.PodEvents(f.Context(), name, "Unhealthy")
	if err != nil {
		t.Fatal(err)
	}
	return ready.Sub(started), failures, ready
}
