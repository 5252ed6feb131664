//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestVirtctlExpand: `virtctl expand` shows what a VM of an instance type and a preference
// runs, for a VM in the cluster (a viewer may ask) and for one in a file; the output is a VM
// without them that the cluster accepts as it is.
func TestVirtctlExpand(t *testing.T) {
	f := framework.New(t)
	manifest, err := f.VirtctlStdout("create", "vm", "--name", "sized", "--run-strategy", "Halted",
		"--instancetype", "u1.small", "--preference", "debian", "--volume-containerdisk", "src:"+testguest.DiskImage)
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/sized.yaml"
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := f.VirtctlStdout("expand", "--file", file)
	if err != nil {
		t.Fatalf("virtctl expand --file: %v", err)
	}
	checkExpandedVM(t, fromFile)

	if out, err := f.KubectlAs(f.Kubeconfig, manifest, "create", "-f", "-"); err != nil {
		t.Fatalf("kubectl create:\n%s: %v", out, err)
	}
	viewer := f.UserKubeconfig("viewer", "view")
	inCluster, err := f.VirtctlAs(viewer, "expand", "--vm", "sized")
	if err != nil {
		t.Fatalf("virtctl expand --vm as a viewer: %v\n%s", err, inCluster)
	}
	checkExpandedVM(t, inCluster)

	// The expanded VM is one the cluster takes as it is: the same guest, no instance type.
	renamed := strings.Replace(inCluster, "name: sized", "name: sized-expanded", 1)
	if out, err := f.KubectlAs(f.Kubeconfig, renamed, "create", "-f", "-"); err != nil {
		t.Fatalf("kubectl create of the expanded VM:\n%s: %v", out, err)
	}
	vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), "sized-expanded", metav1.GetOptions{})
	if err != nil || vm.Spec.Instancetype != nil {
		t.Fatalf("the expanded VM as created: %+v, %v", vm, err)
	}

	if out, err := f.Virtctl("expand", "--vm", "nothing"); err == nil || !strings.Contains(out, "not found") {
		t.Errorf("virtctl expand of no VM: %v\n%s", err, out)
	}
}

// checkExpandedVM: u1.small's vCPU and 2Gi, the debian preference's virtio disk and EFI, and
// neither matcher.
func checkExpandedVM(t *testing.T, out string) {
	t.Helper()
	var vm v1.VirtualMachine
	if err := yaml.UnmarshalStrict([]byte(out), &vm); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := vm.Spec.Template.Spec.Domain
	switch {
	case vm.Spec.Instancetype != nil || vm.Spec.Preference != nil:
		t.Errorf("matchers left in:\n%s", out)
	case d.CPU == nil || d.CPU.Sockets*max(d.CPU.Cores, 1)*max(d.CPU.Threads, 1) != 1 || d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.String() != "2Gi":
		t.Errorf("CPU %+v, memory %+v, want u1.small's 1 vCPU and 2Gi", d.CPU, d.Memory)
	case len(d.Devices.Disks) == 0 || d.Devices.Disks[0].Disk == nil || d.Devices.Disks[0].Disk.Bus != v1.DiskBusVirtio || d.Firmware == nil || d.Firmware.Bootloader == nil || d.Firmware.Bootloader.EFI == nil:
		t.Errorf("disks %+v, firmware %+v, want the debian preference's virtio disk and EFI", d.Devices.Disks, d.Firmware)
	}
}
