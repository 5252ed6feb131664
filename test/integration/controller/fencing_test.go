package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// holdFinalizer stands for anything outside the project that keeps an instance in the API
// after its deletion: a backup tool, a storage driver, a stuck node.
const holdFinalizer = "test.vmctl.io/hold"

// TestFencing: a VM restarted while its old instance cannot leave the API (a foreign finalizer
// holds it, or holds its launcher pod) starts no second instance until the old one is really
// gone, and shows Stopping meanwhile. Released, exactly one new instance starts.
func TestFencing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		strategy v1.VirtualMachineRunStrategy
		restart  func(t *testing.T, vmi *v1.VirtualMachineInstance)
		// holdPod: the finalizer holds the launcher pod, not the instance: the instance must
		// wait for its pod (the guest may still run there) before it leaves the API.
		holdPod bool
	}{
		{"Always, instance deleted", v1.RunStrategyAlways, func(t *testing.T, vmi *v1.VirtualMachineInstance) {
			deleteVMI(t, vmi)
		}, false},
		{"Always, restart request", v1.RunStrategyAlways, func(t *testing.T, vmi *v1.VirtualMachineInstance) {
			requestStateChange(t, vmi.Namespace, vmi.Name, stopRequest(vmi.UID), startRequest)
		}, false},
		{"Manual, restart request", v1.RunStrategyManual, func(t *testing.T, vmi *v1.VirtualMachineInstance) {
			requestStateChange(t, vmi.Namespace, vmi.Name, stopRequest(vmi.UID), startRequest)
		}, false},
		{"Always, instance deleted, launcher pod held", v1.RunStrategyAlways, func(t *testing.T, vmi *v1.VirtualMachineInstance) {
			deleteVMI(t, vmi)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			created := recordVMIs(t, ns)
			vm := createVM(t, ns, "fenced", tt.strategy)
			if tt.strategy == v1.RunStrategyManual {
				requestStateChange(t, ns, vm.Name, startRequest)
			}
			old := waitRunning(t, vm)
			hold, release, held := holdInstance(t, old)
			if tt.holdPod {
				hold, release, held = holdLauncherPod(t, old)
			}
			hold()
			t.Cleanup(release) // lets the namespace go if the test fails

			tt.restart(t, old)
			eventually(t, timeout, "the old instance terminating, held", held)
			eventually(t, timeout, "the VM Stopping", vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopping))
			if got := getVM(t, ns, vm.Name); got.Status.Ready {
				t.Errorf("VM ready while its instance terminates")
			}
			consistently(t, 3*time.Second, "no second instance while the old one is held", func(ctx context.Context) (bool, error) {
				if uids := created.of(vm.Name); len(uids) > 1 {
					return false, fmt.Errorf("instances created: %v", uids)
				}
				vmi, err := getVMI(ctx, ns, vm.Name)
				if err != nil {
					return false, err
				}
				if vmi.UID != old.UID || vmi.DeletionTimestamp == nil {
					return false, fmt.Errorf("instance %s deleting=%v, want the held %s", vmi.UID, vmi.DeletionTimestamp != nil, old.UID)
				}
				return vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopping)(ctx)
			})

			release()
			fresh := waitRunningNot(t, vm, old.UID)
			eventually(t, timeout, "the old instance's launcher pod to go", noLauncherPods(ns, old.UID))
			created.expect(t, vm.Name, 2)
			if uids := created.of(vm.Name); len(uids) == 2 && uids[1] != fresh.UID {
				t.Errorf("instances created: %v, want the held %s then the running %s", uids, old.UID, fresh.UID)
			}
			if pods := launcherPods(t, fresh); len(pods) != 1 {
				t.Errorf("new instance: want one launcher pod, got %s", describePods(pods))
			}
			eventually(t, timeout, "the restart's requests consumed", requestsConsumed(ns, vm.Name))
		})
	}
}

// holdInstance returns how to put holdFinalizer on the instance, take it off again, and a
// condition: the instance is terminating, its launcher pod gone, and only the hold keeps it.
func holdInstance(t *testing.T, vmi *v1.VirtualMachineInstance) (hold, release func(), held func(context.Context) (bool, error)) {
	hold = func() {
		updateVMI(t, vmi.Namespace, vmi.Name, func(vmi *v1.VirtualMachineInstance) {
			vmi.Finalizers = append(vmi.Finalizers, holdFinalizer)
		})
	}
	heldOnly := heldOnly(vmi.Namespace, vmi.Name)
	held = func(ctx context.Context) (bool, error) {
		if ok, err := heldOnly(ctx); !ok {
			return false, err
		}
		return noLauncherPods(vmi.Namespace, vmi.UID)(ctx)
	}
	release = func() {
		if err := releaseHold(vmi.Namespace, vmi.Name); err != nil {
			t.Errorf("releasing instance %s: %v", vmi.Name, err)
		}
	}
	return hold, release, held
}

// holdLauncherPod is holdInstance for the instance's launcher pod: held, the pod is
// terminating and the instance too, kept by the project's own finalizer until the pod goes.
func holdLauncherPod(t *testing.T, vmi *v1.VirtualMachineInstance) (hold, release func(), held func(context.Context) (bool, error)) {
	pods := launcherPods(t, vmi)
	if len(pods) != 1 {
		t.Fatalf("want one launcher pod, got %s", describePods(pods))
	}
	pod := &pods[0]
	change := func(f func([]string) []string) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got, err := kube.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got.Finalizers = f(got.Finalizers)
			_, err = kube.CoreV1().Pods(pod.Namespace).Update(context.Background(), got, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("changing the finalizers of launcher pod %s: %v", pod.Name, err)
		}
	}
	hold = func() { change(func(f []string) []string { return append(f, holdFinalizer) }) }
	release = func() {
		change(func(f []string) []string {
			return slices.DeleteFunc(f, func(s string) bool { return s == holdFinalizer })
		})
	}
	held = func(ctx context.Context) (bool, error) {
		got, err := kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.DeletionTimestamp == nil {
			return false, fmt.Errorf("launcher pod %s not terminating", pod.Name)
		}
		vmi, err := getVMI(ctx, vmi.Namespace, vmi.Name)
		if err != nil {
			return false, err
		}
		if vmi.DeletionTimestamp == nil || !slices.Contains(vmi.Finalizers, v1.VirtualMachineInstanceFinalizer) {
			return false, fmt.Errorf("instance deleting=%v finalizers=%v", vmi.DeletionTimestamp != nil, vmi.Finalizers)
		}
		return true, nil
	}
	return hold, release, held
}

// heldOnly is a condition for eventually: the instance is being deleted and only
// holdFinalizer keeps it (the project's own finalizer was released with the launcher pod).
func heldOnly(ns, name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vmi, err := getVMI(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if vmi.DeletionTimestamp == nil || !slices.Equal(vmi.Finalizers, []string{holdFinalizer}) {
			return false, fmt.Errorf("deleting=%v finalizers=%v", vmi.DeletionTimestamp != nil, vmi.Finalizers)
		}
		return true, nil
	}
}

// releaseHold removes holdFinalizer if the instance still carries it, retrying on conflicts.
// It needs no test context, so cleanups can call it too.
func releaseHold(ns, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	vmis := virt.KubevirtV1().VirtualMachineInstances(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		if err != nil || !slices.Contains(vmi.Finalizers, holdFinalizer) {
			return err
		}
		vmi.Finalizers = slices.DeleteFunc(vmi.Finalizers, func(f string) bool { return f == holdFinalizer })
		_, err = vmis.Update(ctx, vmi, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
