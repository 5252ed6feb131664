//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestAVMSaysWhyItDoesNotStart: as in KubeVirt, kubectl get vm names what holds a VM back, and
// its instance's conditions say it in full: a claim that does not exist yet (no launcher pod
// is made until it does, then the VM starts), more memory than a node has, an image that
// cannot be pulled.
func TestAVMSaysWhyItDoesNotStart(t *testing.T) {
	f := framework.New(t)
	claim := framework.TestGuestVM("claim", v1.RunStrategyAlways)
	claim.Spec.Template.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}}
	huge := framework.TestGuestVM("huge", v1.RunStrategyAlways)
	huge.Spec.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("200Gi")
	pull := framework.TestGuestVM("pull", v1.RunStrategyAlways)
	// Nothing listens on loopback port 1: the pull fails on this machine, and goes nowhere else.
	pull.Spec.Template.Spec.Domain.Firmware.KernelBoot.Container.Image = "localhost:1/vmctl/no-such-guest:devel"
	for _, vm := range []*v1.VirtualMachine{claim, huge, pull} {
		f.CreateVM(vm)
	}

	f.WaitVMStatus("claim", v1.VirtualMachineStatusPvcNotFound, time.Minute)
	waiting := instanceCondition(t, f, "claim", v1.VirtualMachineInstanceSynchronized)
	if want := "PVC " + f.Namespace + "/late does not exist"; waiting.Reason != v1.VirtualMachineInstanceReasonPvcNotFound || !strings.Contains(waiting.Message, want) {
		t.Errorf("instance waiting for its claim: %+v, want %s saying %q", waiting, v1.VirtualMachineInstanceReasonPvcNotFound, want)
	}
	if pods := f.Kubectl("get", "pods", "-o", "name"); strings.Contains(pods, "virt-launcher-claim-") {
		t.Errorf("a launcher pod made before the claim exists: %s", pods)
	}

	f.WaitVMStatus("huge", v1.VirtualMachineStatusUnschedulable, time.Minute)
	// The VM's status and the instance's conditions are two writes: wait for the second.
	waitInstanceCondition(f, "huge", v1.VirtualMachineInstancePodScheduled, "Unschedulable for Insufficient memory", func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Reason == corev1.PodReasonUnschedulable && strings.Contains(c.Message, "Insufficient memory")
	})

	f.Eventually(2*time.Minute, "VM pull to say its image cannot be pulled", func(ctx context.Context) (bool, error) {
		vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(ctx, "pull", metav1.GetOptions{})
		return err == nil && (vm.Status.PrintableStatus == v1.VirtualMachineStatusErrImagePull ||
			vm.Status.PrintableStatus == v1.VirtualMachineStatusImagePullBackOff), err
	})
	waitInstanceCondition(f, "pull", v1.VirtualMachineInstanceSynchronized, "False naming the image", func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "no-such-guest")
	})

	f.JournalPVC("late")
	f.WaitVMStatus("claim", v1.VirtualMachineStatusRunning, 3*time.Minute)
	if c := instanceCondition(t, f, "claim", v1.VirtualMachineInstanceSynchronized); c.Reason == v1.VirtualMachineInstanceReasonPvcNotFound {
		t.Errorf("running instance still says it waits for its claim: %+v", c)
	}
}

// waitInstanceCondition waits a minute for the named instance's condition of type ct to be
// as want says; a timeout names the last condition seen.
func waitInstanceCondition(f *framework.Framework, name string, ct v1.VirtualMachineInstanceConditionType, want string, ok func(v1.VirtualMachineInstanceCondition) bool) {
	f.Eventually(time.Minute, fmt.Sprintf("%s's %s: %s", name, ct, want), func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(ct)
		if c == nil || !ok(*c) {
			return false, fmt.Errorf("%s is %+v", ct, c)
		}
		return true, nil
	})
}

// instanceCondition is the named instance's condition of type ct, empty when it has none.
func instanceCondition(t *testing.T, f *framework.Framework, name string, ct v1.VirtualMachineInstanceConditionType) v1.VirtualMachineInstanceCondition {
	vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := vmi.Status.Condition(ct); c != nil {
		return *c
	}
	return v1.VirtualMachineInstanceCondition{}
}
