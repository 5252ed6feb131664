//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// TestVmctlStatefulSetGivesEachCloneItsDisk runs the example StatefulSet of two vmctl pods
// whose claims are bound in advance to disks of their own. Each clone's guest journals to its
// replica's disk; a replica deleted and made again under its name gets a new clone on the
// same disk, whose journal goes on where the old one stopped. A prototype whose claim every
// clone would share is refused.
func TestVmctlStatefulSetGivesEachCloneItsDisk(t *testing.T) {
	f := framework.New(t)
	replicas := []string{"vmctl-db-0", "vmctl-db-1"}
	disks := map[string]string{}
	for _, pod := range replicas {
		disks[pod] = f.JournalPVC("data-" + pod)
	}
	objs := f.Example("vmctl-statefulset.yaml")
	proto := objs[0].(*v1.VirtualMachine)
	// The prototype's only disk, on virtio, is /dev/vda.
	proto.Spec.Template.Spec.Domain.Firmware.KernelBoot.KernelArgs += " vmctl.journal=/dev/vda"
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(objs...)
	f.WaitClonesRunning("testvm-data", "app=vmctl-db", 2, vmctlTimeout)

	t.Run("each clone writes its replica's claim", func(t *testing.T) {
		for _, pod := range replicas {
			vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm-data", pod), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := vmi.Spec.Volumes[0].PersistentVolumeClaim; got == nil || got.ClaimName != "data-"+pod {
				t.Errorf("clone of %s has volume %+v, want claim data-%s", pod, vmi.Spec.Volumes[0], pod)
			}
			waitJournal(t, f, disks[pod], 3, 1)
		}
	})

	t.Run("a replica made again gets its disk back", func(t *testing.T) {
		name := vmctl.CloneName("testvm-data", replicas[0])
		old, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before, err := framework.ReadJournal(disks[replicas[0]])
		if err != nil {
			t.Fatal(err)
		}
		f.Kubectl("delete", "pod", replicas[0])
		f.WaitClonesRunning("testvm-data", "app=vmctl-db", 2, vmctlTimeout)
		again, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
		if err != nil || again.UID == old.UID {
			t.Fatalf("no new clone for the new pod %s: %v", replicas[0], err)
		}
		after := waitJournal(t, f, disks[replicas[0]], len(before.Records)+3, 2)
		if err := after.Keeps(before); err != nil {
			t.Errorf("the new clone did not go on with its disk: %v", err)
		}
	})

	t.Run("a claim every clone would share is refused", func(t *testing.T) {
		shared := f.Example("vmctl-deployment.yaml")[0].(*appsv1.Deployment)
		shared.Name, shared.Spec.Replicas = "shared", ptr.To[int32](1)
		shared.Spec.Template.Spec.Containers[0].Args = []string{"testvm-data"}
		f.CreateObjects(shared)
		var pod string
		f.Eventually(vmctlTimeout, "vmctl to refuse the shared claim", func(ctx context.Context) (bool, error) {
			pods, err := f.LivePods(ctx, "app=vmctl")
			if err != nil || len(pods) != 1 {
				return false, fmt.Errorf("%d pods (%v)", len(pods), err)
			}
			pod = pods[0].Name
			return f.PodHasEvent(ctx, pod, vmctl.ReasonSharedVolume), nil
		})
		if _, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), vmctl.CloneName("testvm-data", pod), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a clone sharing the claim was made: %v", err)
		}
	})

	f.Kubectl("scale", "statefulset/vmctl-db", "--replicas=0")
	f.WaitNothingLeft("testvm-data", vmctlTimeout)
}

// waitJournal waits until the journal on disk has at least records records from at least
// boots boots, and returns it.
func waitJournal(t *testing.T, f *framework.Framework, disk string, records, boots int) framework.Journal {
	t.Helper()
	var j framework.Journal
	f.Eventually(vmctlTimeout, fmt.Sprintf("%d journal records from %d boots in %s", records, boots, disk), func(context.Context) (bool, error) {
		var err error
		j, err = framework.ReadJournal(disk)
		return err == nil && len(j.Records) >= records && len(j.Boots) >= boots, err
	})
	return j
}
