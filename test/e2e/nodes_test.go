//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// TestVmctlDaemonSetRunsAGuestOnEveryRealNode: the example DaemonSet gives one Running clone
// per real node, each pinned to its pod's node, and one Service answers from the guests of
// both nodes.
func TestVmctlDaemonSetRunsAGuestOnEveryRealNode(t *testing.T) {
	f := framework.New(t)
	nodes := f.RealNodes(2)
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(f.Example("service.yaml")...)
	f.CreateObjects(f.Example("vmctl-daemonset.yaml")...)

	pods := f.WaitClonesRunning("testvm", "app=vmctl-ds", len(nodes), vmctlTimeout)
	onNode := map[string]string{}
	for _, pod := range pods {
		vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm", pod.Name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pinned := framework.PinnedNode(vm); pinned != pod.Spec.NodeName {
			t.Errorf("clone %s pinned to %q, its pod runs on %s", vm.Name, pinned, pod.Spec.NodeName)
		}
		onNode[pod.Spec.NodeName] = vm.Name
	}
	if len(onNode) != len(nodes) {
		t.Fatalf("clones on nodes %v, want one on each of %d real nodes", onNode, len(nodes))
	}
	serviceAnswersFrom(t, f, "testvm", onNode)
}

// TestLosingANodeRestartsItsVMsOnTheOther: the second node is lost (kubelet, containerd and
// every pod process killed). Its handler goes silent, so the node takes no new instances; once
// the operator confirms it down (Kubernetes' out-of-service taint), its Always and
// RerunOnFailure VMs run again on the first node and vmctl's Deployment recovers, with no
// moment where a VM runs twice. The node comes back and takes instances again.
func TestLosingANodeRestartsItsVMsOnTheOther(t *testing.T) {
	f := framework.New(t)
	nodes := f.RealNodes(2)
	lost, kept := nodes[len(nodes)-1].Name, nodes[0].Name
	prefer := preferNode(lost)

	vms := []string{"always", "rerun"}
	for i, strategy := range []v1.VirtualMachineRunStrategy{v1.RunStrategyAlways, v1.RunStrategyRerunOnFailure} {
		vm := framework.TestGuestVM(vms[i], strategy)
		vm.Spec.Template.Spec.Affinity = prefer
		f.CreateVM(vm)
	}
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	deploy := f.Example("vmctl-deployment.yaml")[0].(*appsv1.Deployment)
	deploy.Spec.Replicas = ptr.To[int32](1)
	deploy.Spec.Template.Spec.Affinity = prefer
	f.CreateObjects(deploy)
	lostVMIs := map[string]types.UID{}
	for _, name := range vms {
		f.WaitVMReady(name, bootTimeout)
		vmi := f.WaitVMIPhase(name, v1.Running, 10*time.Second)
		if vmi.Status.NodeName != lost {
			t.Fatalf("VM %s runs on %s; the test needs it on %s", name, vmi.Status.NodeName, lost)
		}
		lostVMIs[name] = vmi.UID
	}
	oldPod := f.WaitClonesRunning("testvm", "app=vmctl", 1, vmctlTimeout)[0]
	if oldPod.Spec.NodeName != lost {
		t.Fatalf("vmctl pod on %s; the test needs it on %s", oldPod.Spec.NodeName, lost)
	}
	guests := f.SampleGuests(append(vms, vmctl.CloneName("testvm", oldPod.Name))...)

	start := time.Now()
	f.LoseNode(lost)
	f.Eventually(2*time.Minute, lost+" out of instance scheduling", func(ctx context.Context) (bool, error) {
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, lost, metav1.GetOptions{})
		return err == nil && node.Labels[v1.SchedulableLabel] == "false", err
	})
	t.Logf("%s: virt-handler silent, node unschedulable for instances after %s", lost, since(start))
	f.ConfirmNodeDown(lost, 3*time.Minute)
	t.Logf("%s: NotReady and tainted out-of-service after %s", lost, since(start))

	for _, name := range vms {
		// Until the node is confirmed down, the lost instances keep their last status.
		vmi := f.WaitNewRunningVMI(name, lostVMIs[name], 5*time.Minute)
		f.WaitVMReady(name, bootTimeout)
		if vmi.Status.NodeName != kept {
			t.Errorf("VM %s runs again on %s, want %s", name, vmi.Status.NodeName, kept)
		}
		t.Logf("VM %s Running and Ready on %s %s after the node was lost", name, vmi.Status.NodeName, since(start))
	}
	newPod := f.WaitClonesRunning("testvm", "app=vmctl", 1, vmctlTimeout)[0]
	f.WaitDeploymentReady(f.Namespace, "vmctl", vmctlTimeout)
	t.Logf("vmctl Deployment back at 1/1 with clone %s on %s %s after the node was lost",
		vmctl.CloneName("testvm", newPod.Name), newPod.Spec.NodeName, since(start))

	for vm, n := range guests() {
		if n > 1 {
			t.Errorf("VM %s ran %d times at once", vm, n)
		}
	}

	f.RestoreNode(lost)
	t.Logf("%s back, Ready and schedulable %s after it was lost", lost, since(start))
	back := framework.TestGuestVM("back", v1.RunStrategyAlways)
	back.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: lost}
	f.CreateVM(back)
	if vmi := f.WaitVMIPhase("back", v1.Running, bootTimeout); vmi.Status.NodeName != lost {
		t.Errorf("VM back runs on %s, want %s", vmi.Status.NodeName, lost)
	}
}

// preferNode steers pods to a node without binding them to it, so they may move.
func preferNode(name string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100,
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}}},
	}}
}

// serviceAnswersFrom waits until the Service's ClusterIP has answered from every guest named
// in hostnames (any key: a node, a pod), as the test guest's page names its host.
func serviceAnswersFrom(t *testing.T, f *framework.Framework, service string, hostnames map[string]string) {
	t.Helper()
	svc, err := f.Kube.CoreV1().Services(f.Namespace).Get(f.Context(), service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/"
	answered := map[string]bool{}
	f.Eventually(2*time.Minute, fmt.Sprintf("every guest of %v to answer on %s", hostnames, url), func(ctx context.Context) (bool, error) {
		body, err := get(ctx, url)
		if err != nil {
			return false, err
		}
		for key, host := range hostnames {
			if strings.Contains(body, "hostname="+host) {
				answered[key] = true
			}
		}
		return len(answered) == len(hostnames), nil
	})
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Second) }
