//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/controller/disruption"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// TestDrainMovesVmctlClonesWithinTheBudget: two vmctl pods on the second node behind the
// example PodDisruptionBudget (maxUnavailable 1). kubectl drain of that node moves their clones
// to the first node one at a time: at every moment at least one clone is Ready, because the
// drain evicts the vmctl pods as the budget allows and never a clone's launcher pod (the clones
// are External, so each launcher pod has a budget of its own).
func TestDrainMovesVmctlClonesWithinTheBudget(t *testing.T) {
	f := framework.New(t)
	nodes := f.RealNodes(2)
	drained, kept := nodes[len(nodes)-1].Name, nodes[0].Name
	t.Cleanup(func() {
		f.Kubectl("uncordon", kept)
		f.Kubectl("uncordon", drained)
	})
	// Both pods on the node to drain: the other takes no pods until they run.
	f.Kubectl("cordon", kept)
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(f.Example("vmctl-pdb.yaml")...)
	deploy := f.Example("vmctl-deployment.yaml")[0].(*appsv1.Deployment)
	deploy.Spec.Replicas = ptr.To[int32](2)
	f.CreateObjects(deploy)
	f.WaitDeploymentReady(f.Namespace, "vmctl", vmctlTimeout)
	before := f.WaitClonesRunning("testvm", "app=vmctl", 2, vmctlTimeout)
	f.Kubectl("uncordon", kept)

	t.Run("each clone's launcher pod has a budget", func(t *testing.T) {
		for _, pod := range before {
			vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm", pod.Name), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f.Eventually(time.Minute, "the budget of "+vmi.Name, func(ctx context.Context) (bool, error) {
				pdb, err := f.Kube.PolicyV1().PodDisruptionBudgets(f.Namespace).Get(ctx, disruption.BudgetName(vmi), metav1.GetOptions{})
				return err == nil && pdb.Status.ExpectedPods == 1, err
			})
		}
	})

	t.Run("kubectl drain moves the clones one at a time", func(t *testing.T) {
		fewestReady := f.SampleReadyClones("testvm")
		start := time.Now()
		out := f.Kubectl("drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10m")
		t.Logf("drained %s in %s; fewest Ready clones during the drain: %d", drained, since(start), fewestReady())
		if !regexp.MustCompile(`evicting pods/"virt-launcher-.*disruption budget`).MatchString(out) {
			t.Errorf("the drain was never held back at a clone's launcher pod:\n%s", out)
		}
		after := f.WaitClonesRunning("testvm", "app=vmctl", 2, vmctlTimeout)
		for _, pod := range after {
			if pod.Spec.NodeName != kept {
				t.Errorf("pod %s runs on %s after the drain, want %s", pod.Name, pod.Spec.NodeName, kept)
			}
		}
		if n := fewestReady(); n < 1 {
			t.Errorf("%d clones were Ready at one point of the drain, the budget allows one fewer than 2", n)
		}
	})

	f.Kubectl("scale", "deployment/vmctl", "--replicas=0")
	f.WaitNothingLeft("testvm", vmctlTimeout)
}
