//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestMigrateStartsATargetOnTheOtherNodeAndCancels: virtctl migrate of a running VM creates a
// migration whose target launcher pod the scheduler puts on the other real node (never the
// source's) and which virt-controller hands over to the handlers; a second migrate is refused
// while it is in flight; virtctl migrate-cancel then deletes the target pod, and the guest runs
// on where it was, never restarted.
func TestMigrateStartsATargetOnTheOtherNodeAndCancels(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	f.CreateVM(framework.TestGuestVM("mover", v1.RunStrategyAlways))
	f.WaitVMReady("mover", bootTimeout)
	vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	source := vmi.Status.NodeName

	if out, err := f.Virtctl("migrate", "mover"); err != nil || !strings.Contains(out, "VM mover was scheduled to migrate") {
		t.Fatalf("virtctl migrate: %v\n%s", err, out)
	}
	var m v1.VirtualMachineInstanceMigration
	f.Eventually(bootTimeout, "migration handed over to the handlers (PreparingTarget)", func(ctx context.Context) (bool, error) {
		list, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=mover"})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Errorf("%d migrations, %v", len(list.Items), err)
		}
		m = list.Items[0]
		if m.Status.Phase.IsFinal() {
			return false, fmt.Errorf("migration ended %s: %+v", m.Status.Phase, m.Status.MigrationState)
		}
		if m.Status.Phase != v1.MigrationPreparingTarget {
			return false, fmt.Errorf("phase %s", m.Status.Phase)
		}
		return true, nil
	})
	state := m.Status.MigrationState
	if state == nil || state.SourceNode != source || state.TargetNode == "" || state.TargetNode == source {
		t.Fatalf("migration state %+v, want from %s to the other node", state, source)
	}
	vmi, err = f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := vmi.Status.MigrationState; s == nil || s.MigrationUID != m.UID || s.TargetPod != state.TargetPod || vmi.Status.MigrationMethod != v1.LiveMigration {
		t.Fatalf("instance migration state %+v method %q, want migration %s to pod %s, LiveMigration (the test guest has no local disk)", s, vmi.Status.MigrationMethod, m.UID, state.TargetPod)
	}
	if out, err := f.Virtctl("migrate", "mover"); err == nil || !strings.Contains(out, "already migrating") {
		t.Fatalf("second virtctl migrate: %v\n%s, want refused as already migrating", err, out)
	}

	if out, err := f.Virtctl("migrate-cancel", "mover"); err != nil {
		t.Fatalf("virtctl migrate-cancel: %v\n%s", err, out)
	}
	f.Eventually(time.Minute, "target pod deleted and migration gone", func(ctx context.Context) (bool, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationJobLabel + "=" + string(m.UID)})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				return false, fmt.Errorf("target pod %s still running on %s", p.Name, p.Spec.NodeName)
			}
		}
		_, err = f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("migration still there: %v", err)
	})
	after, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(f.Context(), metav1.ListOptions{})
	if err != nil || len(after.Items) != 0 {
		t.Fatalf("migrations left: %v %v", after, err)
	}
	got, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != vmi.UID || got.Status.Phase != v1.Running || got.Status.NodeName != source {
		t.Fatalf("instance %s %s on %s after the cancel, want %s Running on %s", got.UID, got.Status.Phase, got.Status.NodeName, vmi.UID, source)
	}
	if s := got.Status.MigrationState; s == nil || !s.Completed || !s.AbortRequested || s.AbortStatus != v1.MigrationAbortSucceeded {
		t.Fatalf("instance migration state after the cancel %+v, want completed, abort succeeded", s)
	}
	f.WaitVMStatus("mover", v1.VirtualMachineStatusRunning, time.Minute)
}
