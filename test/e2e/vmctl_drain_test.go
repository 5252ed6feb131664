//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// TestDrainMovesVmctlClonesWithinTheBudget: two vmctl pods on the second node behind the
// example PodDisruptionBudget (maxUnavailable 1). kubectl drain of that node moves their clones
// to the first node one at a time: at every moment at least one clone is Ready, because the
// drain evicts the vmctl pods as the budget allows and never a clone's launcher pod (the clones
// are External, so virt-api refuses their launcher pods' evictions, as KubeVirt does).
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

	t.Run("a clone's launcher pod is not evicted", func(t *testing.T) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm", before[0].Name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod := f.LauncherPod(vmi)
		err = f.Kube.PolicyV1().Evictions(f.Namespace).Evict(f.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: f.Namespace}})
		if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "evictionStrategy External") {
			t.Fatalf("eviction of %s: %v, want refused (429) for evictionStrategy External", pod.Name, err)
		}
		after := f.WaitVMIPhase(vmi.Name, v1.Running, time.Minute)
		if after.UID != vmi.UID || after.Status.EvacuationNodeName != drained {
			t.Fatalf("instance %s (evacuation %q), want %s running, marked for evacuation from %s", after.UID, after.Status.EvacuationNodeName, vmi.UID, drained)
		}
	})

	t.Run("kubectl drain moves the clones one at a time", func(t *testing.T) {
		fewestReady := f.SampleReadyClones("testvm")
		start := time.Now()
		out := f.Kubectl("drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10m")
		t.Logf("drained %s in %s; fewest Ready clones during the drain: %d", drained, since(start), fewestReady())
		if !regexp.MustCompile(`evicting pods/"virt-launcher-.*evictionStrategy External`).MatchString(out) {
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
