package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/vmi"
)

// TestControllerRestartCreatesNoDuplicates restarts virt-controller while 20 VMs start, as a
// crash or a rollout would, and checks the new instance picked up where the old one stopped:
// every VM ends with exactly one instance, every instance with exactly one launcher pod, and
// nothing was created twice (a watch from the start sees even a creation deleted again).
//
// Not parallel: it stops the controllers every other test relies on.
func TestControllerRestartCreatesNoDuplicates(t *testing.T) {
	const vms = 20
	// Restart once when the first instances exist, again when about half do.
	restartAt := []int{5, vms / 2}

	ns := newNamespace(t)
	instances := recordVMIs(t, ns)
	pods := recordLauncherPods(t, ns)

	// Create the VMs in the background, so some arrive while the controllers are down.
	createErr := make(chan error, 1)
	go func() {
		defer close(createErr)
		for i := range vms {
			vm := newVM(ns, fmt.Sprintf("vm-%02d", i))
			vm.Spec.RunStrategy = new(v1.RunStrategyAlways)
			if _, err := virt.KubevirtV1().VirtualMachines(ns).Create(t.Context(), vm, metav1.CreateOptions{}); err != nil {
				createErr <- err
				return
			}
		}
	}()
	for _, n := range restartAt {
		eventuallyFast(t, fmt.Sprintf("%d instances created", n), func() bool { return instances.total() >= n })
		t.Logf("restarting with %d instances and %d launcher pods created", instances.total(), pods.total())
		restartControllers(t)
	}
	if err := <-createErr; err != nil {
		t.Fatalf("creating the VMs: %v", err)
	}

	eventually(t, 2*timeout, fmt.Sprintf("all %d VMs Running", vms), func(ctx context.Context) (bool, error) {
		list, err := virt.KubevirtV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var notRunning []string
		for _, vm := range list.Items {
			if vm.Status.PrintableStatus != v1.VirtualMachineStatusRunning || !vm.Status.Ready {
				notRunning = append(notRunning, fmt.Sprintf("%s %s", vm.Name, vm.Status.PrintableStatus))
			}
		}
		if len(list.Items) != vms || len(notRunning) > 0 {
			return false, fmt.Errorf("%d VMs, not running: %v", len(list.Items), notRunning)
		}
		return true, nil
	})
	// A late duplicate would come from a sync of the old controllers still under way.
	time.Sleep(time.Second)

	instances.check(t)
	pods.check(t)
	if dup := instances.keysWithMore(1); len(dup) > 0 {
		t.Errorf("VMs whose instance was created more than once: %v", dup)
	}
	if dup := pods.keysWithMore(1); len(dup) > 0 {
		t.Errorf("instances whose launcher pod was created more than once: %v", dup)
	}

	vmList, err := virt.KubevirtV1().VirtualMachines(ns).List(t.Context(), metav1.ListOptions{})
	must(t, err)
	for _, vm := range vmList.Items {
		vmi, err := getVMI(t.Context(), ns, vm.Name)
		if err != nil {
			t.Errorf("VM %s: %v", vm.Name, err)
			continue
		}
		if ref := metav1.GetControllerOf(vmi); ref == nil || ref.UID != vm.UID {
			t.Errorf("instance %s controlled by %+v, want VM %s", vmi.Name, ref, vm.UID)
		}
		instances.expect(t, vm.Name, 1)
		if uids := instances.of(vm.Name); len(uids) == 1 && uids[0] != vmi.UID {
			t.Errorf("VM %s: instance created %s, but %s exists", vm.Name, uids[0], vmi.UID)
		}
		pods.expect(t, string(vmi.UID), 1)
		if got := launcherPods(t, vmi); len(got) != 1 {
			t.Errorf("instance %s: want one launcher pod, got %s", vmi.Name, describePods(got))
		}
	}
	if n, m := instances.total(), pods.total(); n != vms || m != vms {
		t.Errorf("%d instances and %d launcher pods created, want %d of each", n, m, vms)
	}
	all, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: labels.Set{v1.AppLabel: v1.LauncherApp}.String()})
	must(t, err)
	if len(all.Items) != vms {
		t.Errorf("%d launcher pods in the namespace, want %d: %s", len(all.Items), vms, describePods(all.Items))
	}
}

// eventuallyFast polls a cheap in-memory condition every 5ms, so the test acts close to the
// moment it becomes true.
func eventuallyFast(t *testing.T, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOverlappingControllersMakeOneLauncherPerInstance runs a second virt-controller beside
// the first while 20 instances start, as two processes overlap when a rollout's new replica
// takes the Lease before the old one's last syncs are done: each instance still gets exactly
// one launcher pod, under the name both controllers give it.
//
// Not parallel: the second controller acts on every namespace.
func TestOverlappingControllersMakeOneLauncherPerInstance(t *testing.T) {
	const instances = 20
	ns := newNamespace(t)
	pods := recordLauncherPods(t, ns)
	cancel, done, err := runManager()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })

	for i := range instances {
		instance := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vmi-%02d", i), Namespace: ns}, Spec: vmiSpec()}
		_, err := virt.KubevirtV1().VirtualMachineInstances(ns).Create(t.Context(), instance, metav1.CreateOptions{})
		must(t, err)
	}
	eventuallyFast(t, fmt.Sprintf("%d launcher pods", instances), func() bool { return pods.total() >= instances })
	// A second pod would come from a sync the scheduling hold put off.
	time.Sleep(vmi.SchedulingHold + time.Second)

	pods.check(t)
	if dup := pods.keysWithMore(1); len(dup) > 0 {
		t.Errorf("instances whose launcher pod was created more than once: %v", dup)
	}
	if n := pods.total(); n != instances {
		t.Errorf("%d launcher pods created, want %d", n, instances)
	}
}
