package subresources

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/virtapi/subresources"
)

func newVM(t *testing.T, ns, name string, strategy v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	t.Helper()
	vm, err := virt.KubevirtV1().VirtualMachines(ns).Create(context.Background(), &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{RunStrategy: ptr.To(strategy), Template: &v1.VirtualMachineInstanceTemplateSpec{
			Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// newVMI creates the VM's instance, owned by it, as the controller would.
func newVMI(t *testing.T, vm *v1.VirtualMachine) *v1.VirtualMachineInstance {
	t.Helper()
	vmi, err := virt.KubevirtV1().VirtualMachineInstances(vm.Namespace).Create(context.Background(), &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: vm.Name, OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(vm, v1.SchemeGroupVersion.WithKind("VirtualMachine"))}},
		Spec: vm.Spec.Template.Spec,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vmi
}

// newLauncherPod creates a pod labelled as the instance's launcher (no kubelet runs it).
func newLauncherPod(t *testing.T, vmi *v1.VirtualMachineInstance) *corev1.Pod {
	t.Helper()
	pod, err := kube.CoreV1().Pods(vmi.Namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "virt-launcher-" + vmi.Name + "-", Labels: map[string]string{v1.CreatedByLabel: string(vmi.UID)}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "x"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// put calls the handler as the aggregated server's router would.
func put(t *testing.T, ns, name string, verb subresources.Verb, body string) (int, string) {
	t.Helper()
	h := &subresources.Handler{Virt: virt, Kube: kube}
	rec := httptest.NewRecorder()
	h.ServeVM(rec, httptest.NewRequest(http.MethodPut, "/", strings.NewReader(body)), ns, name, verb)
	return rec.Code, rec.Body.String()
}

func getVM(t *testing.T, ns, name string) *v1.VirtualMachine {
	t.Helper()
	vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

func TestStartHaltedWritesTheSpec(t *testing.T) {
	ns := newNamespace(t)
	newVM(t, ns, "vm", v1.RunStrategyHalted)
	if code, body := put(t, ns, "vm", subresources.Start, ""); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	if s := getVM(t, ns, "vm").Spec.RunStrategy; *s != v1.RunStrategyAlways {
		t.Fatalf("run strategy %s", *s)
	}
	code, body := put(t, ns, "vm", subresources.Start, "")
	if code != http.StatusConflict || !strings.Contains(body, `"reason":"Conflict"`) || !strings.Contains(body, "starts it by itself") {
		t.Fatalf("second start: %d %s", code, body)
	}
}

// TestConcurrentStartsOneWins: of many simultaneous starts of a stopped Manual VM exactly one
// is accepted; the others see its pending request and get 409.
func TestConcurrentStartsOneWins(t *testing.T) {
	ns := newNamespace(t)
	newVM(t, ns, "vm", v1.RunStrategyManual)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = put(t, ns, "vm", subresources.Start, "")
		}()
	}
	wg.Wait()
	accepted := 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if reqs := getVM(t, ns, "vm").Status.StateChangeRequests; accepted != 1 || len(reqs) != 1 || reqs[0].Action != v1.StartRequest {
		t.Fatalf("codes %v, requests %+v: want exactly one accepted Start", codes, reqs)
	}
}

// TestForcedRestartDeletesTheLauncherPod: restart queues Stop{uid}+Start, and with
// gracePeriodSeconds 0 deletes the instance's launcher pod at once.
func TestForcedRestartDeletesTheLauncherPod(t *testing.T) {
	ns := newNamespace(t)
	vm := newVM(t, ns, "vm", v1.RunStrategyAlways)
	vmi := newVMI(t, vm)
	ctx := context.Background()
	pod := newLauncherPod(t, vmi)
	if code, body := put(t, ns, "vm", subresources.Restart, `{"gracePeriodSeconds":0}`); code != http.StatusAccepted {
		t.Fatalf("restart: %d %s", code, body)
	}
	reqs := getVM(t, ns, "vm").Status.StateChangeRequests
	if len(reqs) != 2 || reqs[0].Action != v1.StopRequest || *reqs[0].UID != vmi.UID || reqs[1].Action != v1.StartRequest {
		t.Fatalf("requests %+v", reqs)
	}
	if _, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
		t.Fatal("the launcher pod still exists (no kubelet here: grace 0 removes it at once)")
	}
	if code, body := put(t, ns, "vm", subresources.Restart, ""); code != http.StatusConflict || !strings.Contains(body, "pending") {
		t.Fatalf("second restart: %d %s", code, body)
	}
}

func TestStopManualNeedsAnInstance(t *testing.T) {
	ns := newNamespace(t)
	vm := newVM(t, ns, "vm", v1.RunStrategyManual)
	if code, _ := put(t, ns, "vm", subresources.Stop, ""); code != http.StatusConflict {
		t.Fatalf("stop without instance: %d", code)
	}
	vmi := newVMI(t, vm)
	if code, body := put(t, ns, "vm", subresources.Stop, ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	reqs := getVM(t, ns, "vm").Status.StateChangeRequests
	if len(reqs) != 1 || reqs[0].Action != v1.StopRequest || *reqs[0].UID != vmi.UID {
		t.Fatalf("requests %+v", reqs)
	}
	if code, _ := put(t, ns, "missing", subresources.Stop, ""); code != http.StatusNotFound {
		t.Fatalf("stop of a missing VM: %d", code)
	}
	if code, _ := put(t, ns, "vm", subresources.Stop, "{bad"); code != http.StatusBadRequest {
		t.Fatalf("bad body: %d", code)
	}
}

// TestDryRunChangesNothing: start, stop and restart with dryRun ["All"] get the answer the
// request would get, and leave the VM, its requests and its launcher pod as they were.
func TestDryRunChangesNothing(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	newVM(t, ns, "halted", v1.RunStrategyHalted)
	running := newVM(t, ns, "running", v1.RunStrategyManual)
	pod := newLauncherPod(t, newVMI(t, running))
	const dryRun = `"dryRun":["All"]`
	for _, tc := range []struct {
		vm   string
		verb subresources.Verb
		body string
		code int
	}{
		{"halted", subresources.Start, `{` + dryRun + `}`, http.StatusAccepted},
		{"halted", subresources.Stop, `{` + dryRun + `}`, http.StatusConflict},
		{"running", subresources.Stop, `{"gracePeriod":0,` + dryRun + `}`, http.StatusAccepted},
		{"running", subresources.Restart, `{"gracePeriodSeconds":0,` + dryRun + `}`, http.StatusAccepted},
	} {
		if code, body := put(t, ns, tc.vm, tc.verb, tc.body); code != tc.code {
			t.Errorf("%s %s dry run: %d %s, want %d", tc.verb, tc.vm, code, body, tc.code)
		}
	}
	if s := getVM(t, ns, "halted").Spec.RunStrategy; *s != v1.RunStrategyHalted {
		t.Errorf("dry-run start changed the run strategy to %s", *s)
	}
	if reqs := getVM(t, ns, "running").Status.StateChangeRequests; len(reqs) != 0 {
		t.Errorf("dry runs queued requests %+v", reqs)
	}
	if _, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("a dry-run forced stop deleted the launcher pod: %v", err)
	}
}
