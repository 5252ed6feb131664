//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestFreezeAndUnfreezeTheGuestsFileSystems: what a backup tool does before it snapshots a
// guest's disks, as KubeVirt's freeze API (PUT .../virtualmachineinstances/NAME/freeze with
// an unfreezeTimeout, then unfreeze): the guest's agent freezes its file systems (and, frozen,
// refuses its other commands), the instance says fsFreezeStatus frozen until unfrozen, and a
// freeze nobody ends is thawed by the platform once its timeout passes.
func TestFreezeAndUnfreezeTheGuestsFileSystems(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("frozen", v1.RunStrategyAlways)
	spec := testguest.WithAgent(vm.Spec.Template.Spec)
	// A file system to freeze: the guest makes one on its emptyDisk and mounts it.
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: "scratch", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}})
	spec.Domain.Firmware.KernelBoot.KernelArgs += " vmctl.scratch=/dev/vda"
	vm.Spec.Template.Spec = spec
	f.CreateVM(vm)
	vmi := f.WaitVMIPhase("frozen", v1.Running, bootTimeout)
	f.WaitConsole(f.FollowConsole(f.LauncherPod(vmi)), "VMCTL-SCRATCH-MOUNTED", bootTimeout)
	waitAgentConnected(f, "frozen")

	if err := putInstance(f, "frozen", "freeze", `{}`); err == nil || !strings.Contains(err.Error(), "unfreezeTimeout") {
		t.Fatalf("a freeze without its timeout: %v, want a 400 naming unfreezeTimeout", err)
	}
	if err := putInstance(f, "frozen", "freeze", `{"unfreezeTimeout":"5m"}`); err != nil {
		t.Fatalf("freeze: %v", err)
	}
	waitFreezeStatus(f, "frozen", v1.FSFrozen)
	// The agent of a frozen guest answers little but thaw and status: the freeze is real.
	if out, err := f.Virtctl("guestosinfo", "frozen"); err == nil {
		t.Errorf("virtctl guestosinfo of a frozen guest answered:\n%s", out)
	} else {
		t.Logf("virtctl guestosinfo while frozen: %s", strings.TrimSpace(out))
	}
	if err := putInstance(f, "frozen", "freeze", `{"unfreezeTimeout":"5m"}`); err != nil {
		t.Errorf("a second freeze: %v, want it to only move the deadline", err)
	}

	if err := putInstance(f, "frozen", "unfreeze", ``); err != nil {
		t.Fatalf("unfreeze: %v", err)
	}
	waitFreezeStatus(f, "frozen", "")
	if out, err := f.Virtctl("guestosinfo", "frozen"); err != nil {
		t.Errorf("virtctl guestosinfo once thawed: %v\n%s", err, out)
	}

	// A freeze that nobody ends.
	if err := putInstance(f, "frozen", "freeze", `{"unfreezeTimeout":"3s"}`); err != nil {
		t.Fatalf("freeze for 3s: %v", err)
	}
	waitFreezeStatus(f, "frozen", "")
	f.Eventually(30*time.Second, "an UnfrozenByTimeout event on frozen", func(ctx context.Context) (bool, error) {
		return f.PodHasEvent(ctx, "frozen", "UnfrozenByTimeout"), nil
	})
	if out, err := f.Virtctl("guestosinfo", "frozen"); err != nil {
		t.Errorf("virtctl guestosinfo after the timeout's thaw: %v\n%s", err, out)
	}
}

// putInstance PUTs body to the instance's subresource of KubeVirt's subresource API.
func putInstance(f *framework.Framework, name, subresource, body string) error {
	path := fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s/%s", f.Namespace, name, subresource)
	return f.Kube.CoreV1().RESTClient().Put().AbsPath(path).Body([]byte(body)).Do(f.Context()).Error()
}

func waitFreezeStatus(f *framework.Framework, name, want string) {
	f.Eventually(time.Minute, fmt.Sprintf("VMI %s's fsFreezeStatus to be %q", name, want), func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && vmi.Status.FSFreezeStatus == want, err
	})
}
