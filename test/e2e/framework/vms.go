package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestGuestImage is the project's kernelBoot test guest; GuestMarker is on its console.
const (
	TestGuestImage = testguest.Image
	GuestMarker    = testguest.Marker
)

// TestGuestVM is a VirtualMachine of the test guest with the given run strategy, labelled
// app=<name> so a Service can select it.
func TestGuestVM(name string, strategy v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(strategy),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       TestGuestSpec(name),
			},
		},
	}
}

// TestGuestSpec boots the test guest with 128 MiB on the pod network (masquerade).
func TestGuestSpec(hostname string) v1.VirtualMachineInstanceSpec {
	return testguest.Spec(hostname, resource.MustParse("128Mi"))
}

// CreateVM creates vm in the test's namespace.
func (f *Framework) CreateVM(vm *v1.VirtualMachine) *v1.VirtualMachine {
	f.t.Helper()
	created, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Create(f.Context(), vm, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create VM %s: %v", vm.Name, err)
	}
	return created
}

// CreateVMI creates vmi in the test's namespace.
func (f *Framework) CreateVMI(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
	f.t.Helper()
	created, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(), vmi, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create VMI %s: %v", vmi.Name, err)
	}
	return created
}

// SetRunStrategy changes a VM's run strategy, as `kubectl patch` would.
func (f *Framework) SetRunStrategy(name string, strategy v1.VirtualMachineRunStrategy) {
	f.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"runStrategy":%q}}`, strategy)
	if _, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Patch(f.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		f.t.Fatalf("set run strategy of %s: %v", name, err)
	}
}

// WaitVMStatus waits until the VM's printable status (kubectl get vm's STATUS) is want.
func (f *Framework) WaitVMStatus(name string, want v1.VirtualMachinePrintableStatus, timeout time.Duration) *v1.VirtualMachine {
	f.t.Helper()
	var vm *v1.VirtualMachine
	f.Eventually(timeout, fmt.Sprintf("VM %s to be %s", name, want), func(ctx context.Context) (bool, error) {
		var err error
		vm, err = f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && vm.Status.PrintableStatus == want, err
	})
	return vm
}

// WaitVMIPhase waits until the instance of that name is in phase want and returns it.
func (f *Framework) WaitVMIPhase(name string, want v1.VirtualMachineInstancePhase, timeout time.Duration) *v1.VirtualMachineInstance {
	f.t.Helper()
	var vmi *v1.VirtualMachineInstance
	f.Eventually(timeout, fmt.Sprintf("VMI %s to be %s", name, want), func(ctx context.Context) (bool, error) {
		var err error
		vmi, err = f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && vmi.Status.Phase == want, err
	})
	return vmi
}

// LauncherPod is the running launcher pod of an instance.
func (f *Framework) LauncherPod(vmi *v1.VirtualMachineInstance) *corev1.Pod {
	f.t.Helper()
	pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(f.Context(), metav1.ListOptions{
		LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID),
		FieldSelector: fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning)).String(),
	})
	if err != nil || len(pods.Items) != 1 {
		f.t.Fatalf("launcher pod of %s: %d pods, %v", vmi.Name, len(pods.Items), err)
	}
	return &pods.Items[0]
}

// WaitVMReady waits until the VM reports ready (kubectl get vm's READY column).
func (f *Framework) WaitVMReady(name string, timeout time.Duration) {
	f.t.Helper()
	f.Eventually(timeout, "VM "+name+" to be ready", func(ctx context.Context) (bool, error) {
		vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && vm.Status.Ready, err
	})
}

// RecordPrintableStatuses watches a VM from now on and returns a func giving every printable
// status it had, in order, without repeats: what `kubectl get vm -w` would have shown.
func (f *Framework) RecordPrintableStatuses(name string) func() []v1.VirtualMachinePrintableStatus {
	f.t.Helper()
	w, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Watch(f.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		f.t.Fatalf("watch VM %s: %v", name, err)
	}
	var mu sync.Mutex
	var seen []v1.VirtualMachinePrintableStatus
	go func() {
		for ev := range w.ResultChan() {
			vm, ok := ev.Object.(*v1.VirtualMachine)
			if !ok {
				continue
			}
			mu.Lock()
			if s := vm.Status.PrintableStatus; s != "" && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	f.t.Cleanup(w.Stop)
	return func() []v1.VirtualMachinePrintableStatus {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// FollowConsole streams the launcher pod's guest-console-log container, the guest's serial
// console, from now on; the returned func gives what arrived so far. It keeps reading while
// the pod terminates.
func (f *Framework) FollowConsole(pod *corev1.Pod) func() string {
	f.t.Helper()
	stream, err := f.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: GuestConsoleLog, Follow: true}).Stream(f.Context())
	if err != nil {
		f.t.Fatalf("logs of %s: %v", pod.Name, err)
	}
	var mu sync.Mutex
	var out strings.Builder
	go func() {
		defer stream.Close()
		buf := make([]byte, 4096)
		for {
			n, err := stream.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
}

// GuestConsoleLog is the launcher pod's container whose log is the guest's serial console.
const GuestConsoleLog = "guest-console-log"

// WaitConsole waits until the console shows text.
func (f *Framework) WaitConsole(console func() string, text string, timeout time.Duration) {
	f.t.Helper()
	f.Eventually(timeout, "the guest console to show "+text, func(context.Context) (bool, error) {
		return strings.Contains(console(), text), nil
	})
}

// WaitNewRunningVMI waits until the instance of that name runs with a UID other than old.
func (f *Framework) WaitNewRunningVMI(name string, old types.UID, timeout time.Duration) *v1.VirtualMachineInstance {
	f.t.Helper()
	var vmi *v1.VirtualMachineInstance
	f.Eventually(timeout, "a new running VMI "+name, func(ctx context.Context) (bool, error) {
		var err error
		vmi, err = f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && vmi.UID != old && vmi.Status.Phase == v1.Running, err
	})
	return vmi
}
