package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// createMigration asks for a migration of the instance.
func createMigration(t *testing.T, vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstanceMigration {
	t.Helper()
	m, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(vmi.Namespace).Create(t.Context(), &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "migrate-" + vmi.Name + "-"},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi.Name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// migrationPhase is a condition for eventually: the migration is in phase want.
func migrationPhase(m *v1.VirtualMachineInstanceMigration, want v1.VirtualMachineInstanceMigrationPhase) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		got, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(m.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Phase != want {
			return false, fmt.Errorf("phase %q", got.Status.Phase)
		}
		return true, nil
	}
}

// targetPods are the migration's target launcher pods.
func targetPods(t *testing.T, m *v1.VirtualMachineInstanceMigration) []corev1.Pod {
	t.Helper()
	pods, err := kube.CoreV1().Pods(m.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: v1.MigrationJobLabel + "=" + string(m.UID)})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// TestMigrationTargetNeverScheduled: a migration of a running instance gets a target launcher
// pod that must not share the source's node. The test cluster has one node, so the target is
// never scheduled: the migration goes Scheduling, then Failed with the scheduler's reason once
// the target timeout passes; its target pod is deleted and the instance runs on untouched.
func TestMigrationTargetNeverScheduled(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vmi := waitRunning(t, createVM(t, ns, "mover", v1.RunStrategyAlways))
	m := createMigration(t, vmi)

	eventually(t, timeout, "migration Scheduling", migrationPhase(m, v1.MigrationScheduling))
	m, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), m.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Labels[v1.MigrationSelectorLabel] != vmi.Name {
		t.Errorf("migration labels %v, want %s=%s", m.Labels, v1.MigrationSelectorLabel, vmi.Name)
	}
	s := m.Status.MigrationState
	if s == nil || s.SourceNode != nodeName || s.SourcePod == "" || s.TargetPod == "" {
		t.Fatalf("migration state %+v, want source node %s, source and target pods", s, nodeName)
	}
	targets := targetPods(t, m)
	if len(targets) != 1 || targets[0].Name != s.TargetPod {
		t.Fatalf("target pods %s, want %s", describePods(targets), s.TargetPod)
	}
	anti := targets[0].Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].LabelSelector.MatchLabels[v1.CreatedByLabel] != string(vmi.UID) {
		t.Errorf("target anti-affinity %+v, want away from pods created by %s", anti, vmi.UID)
	}

	eventually(t, timeout+migrationTargetTimeout, "migration Failed", migrationPhase(m, v1.MigrationFailed))
	m, err = virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), m.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Status.MigrationState; s == nil || !s.Failed || !strings.Contains(s.FailureReason, "anti-affinity") {
		t.Errorf("failed migration state %+v, want the scheduler's anti-affinity message", s)
	}
	if n := len(m.Status.PhaseTransitionTimestamps); n != 3 {
		t.Errorf("phase timestamps %+v, want Pending, Scheduling, Failed", m.Status.PhaseTransitionTimestamps)
	}
	eventually(t, timeout, "target pod deleted", func(ctx context.Context) (bool, error) {
		return len(targetPods(t, m)) == 0, nil
	})
	eventually(t, timeout, "finalizer released", func(ctx context.Context) (bool, error) {
		got, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(ctx, m.Name, metav1.GetOptions{})
		return err == nil && len(got.Finalizers) == 0, err
	})
	if got := waitRunning(t, getVM(t, ns, "mover")); got.UID != vmi.UID || got.Status.NodeName != nodeName {
		t.Errorf("instance %s on %q after the failed migration, want %s on %s", got.UID, got.Status.NodeName, vmi.UID, nodeName)
	}
}

// TestMigrationOneAtATimeAndCancel: a second migration of the same instance waits Pending
// while the first is in flight; deleting the first (a cancel) deletes its target pod and lets
// the migration object go, and the second starts.
func TestMigrationOneAtATimeAndCancel(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vmi := waitRunning(t, createVM(t, ns, "mover", v1.RunStrategyAlways))
	first := createMigration(t, vmi)
	eventually(t, timeout, "first migration Scheduling", migrationPhase(first, v1.MigrationScheduling))
	second := createMigration(t, vmi)
	eventually(t, timeout, "second migration Pending", migrationPhase(second, v1.MigrationPending))
	consistently(t, time.Second, "second migration still Pending", migrationPhase(second, v1.MigrationPending))
	first, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), first.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Delete(t.Context(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "cancelled migration gone", gone(func(ctx context.Context) error {
		_, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(ctx, first.Name, metav1.GetOptions{})
		return err
	}))
	if pods := targetPods(t, first); len(pods) != 0 && pods[0].DeletionTimestamp == nil {
		t.Errorf("target pods of the cancelled migration left: %s", describePods(pods))
	}
	eventually(t, timeout, "second migration Scheduling", migrationPhase(second, v1.MigrationScheduling))
}
