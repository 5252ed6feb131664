//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// What the guest's kernel says on its console about its RAM and vCPUs:
// "Memory: 1986796K/2096632K available (...)" and "smp: Brought up 1 node, 2 CPUs".
var (
	guestMemory = regexp.MustCompile(`Memory: \d+K/(\d+)K available`)
	guestCPUs   = regexp.MustCompile(`Brought up \d+ nodes?, (\d+) CPUs?`)
)

// TestInstancetypes: `virtctl create vm --instancetype u1.small` piped into kubectl apply runs a
// guest with the instance type's vCPU and 2Gi, which the guest's kernel sees; a VM of a
// namespaced instance type keeps the copy it pinned when the instance type changes, running
// and across a restart; and admission refuses a missing instance type and a template that
// sets what the instance type sets.
func TestInstancetypes(t *testing.T) {
	f := framework.New(t)
	disk := "src:" + testguest.DiskImage

	apply := func(args ...string) {
		t.Helper()
		manifest, err := f.VirtctlStdout(append([]string{"create", "vm", "--termination-grace-period", "5"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := f.KubectlAs(f.Kubeconfig, manifest, "apply", "-f", "-"); err != nil {
			t.Fatalf("kubectl apply:\n%s\n%s: %v", manifest, out, err)
		}
	}

	// Refusals first: they cost no boot.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "nope", "--instancetype", "u1.nope", "--volume-containerdisk", disk}, `Failure to find instancetype: virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.nope" not found`},
	} {
		manifest, err := f.VirtctlStdout(append([]string{"create", "vm"}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := f.KubectlAs(f.Kubeconfig, manifest, "apply", "-f", "-"); err == nil || !strings.Contains(out, c.want) {
			t.Errorf("kubectl apply %v: %v\n%s\nwant a refusal saying %q", c.args, err, out, c.want)
		}
	}
	conflicting := framework.TestGuestVM("conflict", v1.RunStrategyHalted) // a memory request of its own
	conflicting.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "u1.small"}
	_, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Create(f.Context(), conflicting, metav1.CreateOptions{})
	if want := "VM field(s) spec.template.spec.domain.resources.requests.memory conflicts with selected instance type"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a template with a memory request and an instance type: %v, want %q", err, want)
	}

	// u1.small from the starter set: 1 vCPU, 2Gi.
	apply("--name", "small", "--instancetype", "u1.small", "--volume-containerdisk", disk)
	vmi := f.WaitVMIPhase("small", v1.Running, bootTimeout)
	expectInstance(t, f, vmi, 1, "2Gi")
	if vmi.Annotations["kubevirt.io/cluster-instancetype-name"] != "u1.small" {
		t.Errorf("annotations %v, want kubevirt.io/cluster-instancetype-name=u1.small", vmi.Annotations)
	}

	// A namespaced instance type of 2 vCPUs and 256Mi (virtctl create instancetype), pinned,
	// then grown.
	manifest, err := f.VirtctlStdout("create", "instancetype", "--namespaced", "--name", "e2e-small", "--cpu", "2", "--memory", "256Mi")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := f.KubectlAs(f.Kubeconfig, manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply:\n%s\n%s: %v", manifest, out, err)
	}
	types := f.Virt.InstancetypeV1beta1().VirtualMachineInstancetypes(f.Namespace)
	it, err := types.Get(f.Context(), "e2e-small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apply("--name", "pinned", "--instancetype", "virtualmachineinstancetype/e2e-small", "--volume-containerdisk", disk)
	first := f.WaitVMIPhase("pinned", v1.Running, bootTimeout)
	expectInstance(t, f, first, 2, "256Mi")
	vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), "pinned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := vm.Status.InstancetypeRef
	if ref == nil || ref.Kind != v1.InstancetypeKind || ref.ControllerRevisionRef == nil ||
		ref.ControllerRevisionRef.Name != "pinned-e2e-small-v1beta1-"+string(it.UID)+"-1" {
		t.Fatalf("status.instancetypeRef %+v, want the revision of generation 1", ref)
	}

	it.Spec.CPU.Guest, it.Spec.Memory.Guest = 1, resource.MustParse("512Mi")
	if _, err := types.Update(f.Context(), it, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	running, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "pinned", metav1.GetOptions{})
	if err != nil || running.UID != first.UID || running.Spec.Domain.Memory.Guest.String() != "256Mi" {
		t.Fatalf("the running instance after the instance type grew: %v, memory %s", err, running.Spec.Domain.Memory.Guest)
	}
	expectVirtctl(t, f, "", "restart", "pinned")
	restarted := f.WaitNewRunningVMI("pinned", first.UID, bootTimeout)
	expectInstance(t, f, restarted, 2, "256Mi")
}

// expectInstance checks the instance's spec has vCPUs (as sockets, the default topology)
// and memory, and that its guest's kernel found as much.
func expectInstance(t *testing.T, f *framework.Framework, vmi *v1.VirtualMachineInstance, vCPUs int, memory string) {
	t.Helper()
	cpu, mem := vmi.Spec.Domain.CPU, vmi.Spec.Domain.Memory
	if cpu == nil || int(cpu.Sockets*cpu.Cores*cpu.Threads) != vCPUs || mem == nil || mem.Guest == nil || mem.Guest.String() != memory {
		t.Fatalf("%s: cpu %+v memory %+v, want %d vCPUs and %s", vmi.Name, cpu, mem, vCPUs, memory)
	}
	console := f.FollowConsole(f.LauncherPod(vmi))
	var log string
	f.Eventually(bootTimeout, vmi.Name+": the guest kernel's CPU and memory lines", func(context.Context) (bool, error) {
		log = console()
		return guestCPUs.MatchString(log) && guestMemory.MatchString(log), nil
	})
	t.Logf("%s: the guest's kernel says %q and %q", vmi.Name, guestCPUs.FindString(log), guestMemory.FindString(log))
	if n, _ := strconv.Atoi(guestCPUs.FindStringSubmatch(log)[1]); n != vCPUs {
		t.Errorf("%s: the guest brought up %d CPUs, want %d", vmi.Name, n, vCPUs)
	}
	// The kernel counts RAM less the firmware's holes: a few MiB under the guest memory.
	kib, _ := strconv.ParseInt(guestMemory.FindStringSubmatch(log)[1], 10, 64)
	want := resource.MustParse(memory)
	if total := kib * 1024; total > want.Value() || total < want.Value()-32<<20 {
		t.Errorf("%s: the guest has %dK of RAM, want a little under %s", vmi.Name, kib, memory)
	}
}
