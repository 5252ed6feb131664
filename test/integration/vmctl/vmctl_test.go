// Package vmctl runs vmctl in-process against a real kube-apiserver, etcd and garbage
// collector, as the ServiceAccount of examples/vmctl-rbac.yaml: the Role is enough, the
// clones pass the CRD's validation, and the garbage collector follows their ownerReference.
// No kubelet or virt-controller runs: clones never start here (the e2e tests boot them).
package vmctl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/vmctl"
)

var (
	server *apiserver.Server
	kube   kubernetes.Interface
	virt   versioned.Interface
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	env, stop, err := apiserver.Setup(true)
	defer stop()
	server, kube, virt = env.Server, env.Kube, env.Virt
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}
	return m.Run()
}

// TestVmctlWithTheExampleRole: vmctl, as the example's ServiceAccount, waits for a missing
// prototype (saying so on its pod), clones it once it appears, and deletes the clone when
// stopped, saying so on its pod, and exits cleanly.
func TestVmctlWithTheExampleRole(t *testing.T) {
	e := newEnv(t)
	stop := e.start(vmctl.Options{})
	e.eventually("a PrototypeUnavailable event", func(ctx context.Context) bool {
		return strings.Contains(e.event(ctx, vmctl.ReasonPrototypeUnavailable), "not found")
	})
	e.create(example(t, "prototype-vm.yaml")...)
	var clone *v1.VirtualMachine
	e.eventually("the clone", func(ctx context.Context) bool {
		var err error
		clone, err = e.clone(ctx)
		return err == nil
	})
	if ref := metav1.GetControllerOf(clone); ref == nil || ref.UID != e.pod.UID || ref.Kind != "Pod" {
		t.Errorf("clone's controller %+v, want the pod", ref)
	}
	if clone.Spec.RunStrategy == nil || *clone.Spec.RunStrategy != v1.RunStrategyAlways || clone.Spec.Running != nil {
		t.Errorf("clone runs with running=%v runStrategy=%v", clone.Spec.Running, clone.Spec.RunStrategy)
	}
	// Events are recorded asynchronously, after the clone exists.
	e.eventually("a CloneCreated event", func(ctx context.Context) bool {
		return e.event(ctx, vmctl.ReasonCloneCreated) != ""
	})

	if err := stop(); err != nil {
		t.Fatalf("vmctl exited with %v", err)
	}
	if _, err := e.clone(context.Background()); !apierrors.IsNotFound(err) {
		t.Errorf("after vmctl stopped the clone is still there: %v", err)
	}
	// The teardown runs after SIGTERM cancelled vmctl's context: its event must still go out.
	e.eventually("a CloneDeleted event", func(ctx context.Context) bool {
		return e.event(ctx, vmctl.ReasonCloneDeleted) != ""
	})
}

// TestVmctlAdoptsAndTheGarbageCollectorCollects: a clone left by an earlier vmctl of the same
// pod is adopted, not replaced; and when the pod goes without vmctl deleting anything (as after
// SIGKILL), the garbage collector removes the clone.
func TestVmctlAdoptsAndTheGarbageCollectorCollects(t *testing.T) {
	e := newEnv(t)
	e.create(example(t, "prototype-vm.yaml")...)
	proto, err := virt.KubevirtV1().VirtualMachines(e.ns).Get(context.Background(), "testvm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	left, err := vmctl.Clone(proto, e.pod, e.ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = virt.KubevirtV1().VirtualMachines(e.ns).Create(context.Background(), left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := e.start(vmctl.Options{})
	e.eventually("a CloneAdopted event", func(ctx context.Context) bool { return e.event(ctx, vmctl.ReasonCloneAdopted) != "" })
	if clone, err := e.clone(context.Background()); err != nil || clone.UID != left.UID {
		t.Fatalf("the clone was replaced: %v", err)
	}
	// Only the garbage collector may act now: vmctl stops first (removing its clone), the
	// clone is put back as a SIGKILLed vmctl would have left it, then the pod is deleted.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	left.ResourceVersion, left.UID = "", ""
	if _, err := virt.KubevirtV1().VirtualMachines(e.ns).Create(context.Background(), left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Pods(e.ns).Delete(context.Background(), e.pod.Name, *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the garbage collector to remove the clone", func(ctx context.Context) bool {
		_, err := e.clone(ctx)
		return apierrors.IsNotFound(err)
	})
}

// TestVmctlCannotReadThePrototype: a prototype in a namespace the Role does not cover leaves
// vmctl waiting, with an event saying what access is missing.
func TestVmctlCannotReadThePrototype(t *testing.T) {
	e := newEnv(t)
	elsewhere, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "protos-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), elsewhere.Name, metav1.DeleteOptions{})
	})
	for _, obj := range example(t, "prototype-vm.yaml") {
		if _, err := virt.KubevirtV1().VirtualMachines(elsewhere.Name).Create(context.Background(), obj.(*v1.VirtualMachine), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.start(vmctl.Options{ProtoNamespace: elsewhere.Name})
	e.eventually("a PrototypeUnavailable event naming the missing access", func(ctx context.Context) bool {
		return strings.Contains(e.event(ctx, vmctl.ReasonPrototypeUnavailable), "may not read")
	})
	if _, err := e.clone(context.Background()); !apierrors.IsNotFound(err) {
		t.Errorf("a clone exists: %v", err)
	}
}
