//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/api/migrations/v1alpha1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestKilledTargetFailsTheMigrationAndARetrySucceeds: a MigrationPolicy caps the test guest's
// migrations at 1 MiB/s, so its memory takes a while to copy; kill -9 of the target's
// virt-launcher mid-copy ends the migration Failed with the reason, the guest runs on in the
// source pod (same instance, node and boot), and once the policy is gone a second
// virtctl migrate moves it to the other node without a reboot.
func TestKilledTargetFailsTheMigrationAndARetrySucceeds(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	policy := &v1alpha1.MigrationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "slow-" + f.Namespace},
		Spec: v1alpha1.MigrationPolicySpec{
			Selectors:             &v1alpha1.Selectors{VirtualMachineInstanceSelector: v1alpha1.LabelSelector{"vmctl.io/slow-migration": f.Namespace}},
			BandwidthPerMigration: ptr.To(resource.MustParse("1Mi")),
		},
	}
	policies := f.Virt.MigrationsV1alpha1().MigrationPolicies()
	if _, err := policies.Create(f.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), policy.Name, metav1.DeleteOptions{}) })

	vm := framework.TestGuestVM("mover", v1.RunStrategyAlways)
	vm.Spec.Template.ObjectMeta.Labels["vmctl.io/slow-migration"] = f.Namespace
	f.CreateVM(vm)
	f.WaitVMReady("mover", bootTimeout)
	before := f.WaitVMIPhase("mover", v1.Running, time.Minute)
	boot := guestBoot(t, f, before)

	if out, err := f.Virtctl("migrate", "mover"); err != nil {
		t.Fatalf("virtctl migrate: %v\n%s", err, out)
	}
	var target string
	f.Eventually(3*time.Minute, "the capped copy to run", func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, "mover", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := vmi.Status.MigrationState
		if s == nil || s.StartTimestamp == nil || s.Completed {
			return false, fmt.Errorf("migration state %+v", s)
		}
		if s.MigrationPolicyName == nil || *s.MigrationPolicyName != policy.Name || s.MigrationConfiguration == nil ||
			s.MigrationConfiguration.BandwidthPerMigration.String() != "1Mi" {
			t.Fatalf("the copy runs without the policy: %+v", s)
		}
		target = s.TargetPod
		return true, nil
	})
	time.Sleep(2 * time.Second) // well into the copy
	f.Kubectl("exec", target, "-c", "compute", "--", "sh", "-c", "kill -9 $(pidof virt-launcher)")

	m := waitMigrationEnd(t, f, "mover", 3*time.Minute)
	if m.Status.Phase != v1.MigrationFailed || m.Status.MigrationState == nil || m.Status.MigrationState.FailureReason == "" {
		t.Fatalf("migration %s %+v after its target was killed, want Failed with the reason", m.Status.Phase, m.Status.MigrationState)
	}
	t.Logf("the migration failed: %s", m.Status.MigrationState.FailureReason)
	f.Eventually(time.Minute, "the killed target pod to be deleted", func(ctx context.Context) (bool, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationJobLabel + "=" + string(m.UID)})
		if err != nil || len(pods.Items) != 0 {
			return false, fmt.Errorf("%d target pods left, %v", len(pods.Items), err)
		}
		return true, nil
	})
	after := f.WaitVMIPhase("mover", v1.Running, time.Minute)
	if after.UID != before.UID || after.Status.NodeName != before.Status.NodeName {
		t.Fatalf("instance %s on %s after the failed migration, want %s still on %s", after.UID, after.Status.NodeName, before.UID, before.Status.NodeName)
	}
	if got := guestBoot(t, f, after); got != boot {
		t.Fatalf("the guest rebooted when its migration failed: boot %s, was %s", got, boot)
	}
	if pod := f.LauncherPod(after); pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("source launcher pod %s is %s", pod.Name, pod.Status.Phase)
	}

	if err := policies.Delete(f.Context(), policy.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).Delete(f.Context(), m.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := f.Virtctl("migrate", "mover"); err != nil {
		t.Fatalf("virtctl migrate (the retry): %v\n%s", err, out)
	}
	if m := waitMigrationEnd(t, f, "mover", 3*time.Minute); m.Status.Phase != v1.MigrationSucceeded {
		t.Fatalf("the retry ended %s: %+v", m.Status.Phase, m.Status.MigrationState)
	}
	moved := f.WaitVMIPhase("mover", v1.Running, time.Minute)
	if moved.UID != before.UID || moved.Status.NodeName == before.Status.NodeName {
		t.Fatalf("instance %s on %s after the retry, want %s on the other node", moved.UID, moved.Status.NodeName, before.UID)
	}
	if got := guestBoot(t, f, moved); got != boot {
		t.Fatalf("the guest rebooted in the retry: boot %s, was %s", got, boot)
	}
}

// TestAnInstanceThatCannotMoveSaysWhy: a guest bridged onto the pod network holds the pod's
// address, so it cannot live-migrate. Its instance says so in its LiveMigratable condition;
// virtctl migrate is refused with that reason, a migration created anyway fails with it, and
// with evictionStrategy LiveMigrate an eviction of its launcher pod (a drain) is refused
// rather than shutting the guest down.
func TestAnInstanceThatCannotMoveSaysWhy(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("bridged", v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}
	vm.Spec.Template.Spec.EvictionStrategy = ptr.To(v1.EvictionStrategyLiveMigrate)
	f.CreateVM(vm)
	vmi := f.WaitVMIPhase("bridged", v1.Running, bootTimeout)
	c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != v1.VirtualMachineInstanceReasonInterfaceNotMigratable {
		t.Fatalf("LiveMigratable condition %+v, want False %s", c, v1.VirtualMachineInstanceReasonInterfaceNotMigratable)
	}

	out, err := f.Virtctl("migrate", "bridged")
	if err == nil || !strings.Contains(out, v1.VirtualMachineInstanceReasonInterfaceNotMigratable) {
		t.Fatalf("virtctl migrate: %v\n%s, want refused with the reason", err, out)
	}
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "anyway"}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "bridged"}}
	if _, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).Create(f.Context(), m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := waitMigrationEnd(t, f, "bridged", time.Minute); got.Status.Phase != v1.MigrationFailed ||
		!strings.Contains(got.Status.MigrationState.FailureReason, "cannot live-migrate") {
		t.Fatalf("migration %s %+v, want Failed: cannot live-migrate", got.Status.Phase, got.Status.MigrationState)
	}

	pod := f.LauncherPod(vmi)
	err = f.Kube.PolicyV1().Evictions(f.Namespace).Evict(f.Context(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: f.Namespace}})
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "cannot live-migrate") {
		t.Fatalf("eviction of the launcher pod: %v, want refused (429) because it cannot live-migrate", err)
	}
	after := f.WaitVMIPhase("bridged", v1.Running, time.Minute)
	if after.UID != vmi.UID || after.Status.NodeName != vmi.Status.NodeName || after.Status.EvacuationNodeName != "" {
		t.Fatalf("instance %s on %s (evacuation %q), want %s untouched on %s", after.UID, after.Status.NodeName, after.Status.EvacuationNodeName, vmi.UID, vmi.Status.NodeName)
	}
}

// waitMigrationEnd waits for the instance's only migration to be Succeeded or Failed.
func waitMigrationEnd(t *testing.T, f *framework.Framework, vmiName string, timeout time.Duration) v1.VirtualMachineInstanceMigration {
	t.Helper()
	var m v1.VirtualMachineInstanceMigration
	f.Eventually(timeout, "the migration of "+vmiName+" to end", func(ctx context.Context) (bool, error) {
		list, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=" + vmiName})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Errorf("%d migrations, %v", len(list.Items), err)
		}
		m = list.Items[0]
		if !m.Status.Phase.IsFinal() {
			return false, fmt.Errorf("phase %s", m.Status.Phase)
		}
		return true, nil
	})
	return m
}

// migrate live-migrates the instance (a migration of that name), expects it to succeed and
// returns the instance running on its new node.
func migrate(t *testing.T, f *framework.Framework, migration, vmiName string) *v1.VirtualMachineInstance {
	t.Helper()
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: migration}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmiName}}
	if _, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).Create(f.Context(), m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := waitMigrationEnd(t, f, vmiName, 3*time.Minute); got.Status.Phase != v1.MigrationSucceeded {
		t.Fatalf("migration %s %+v, want Succeeded", got.Status.Phase, got.Status.MigrationState)
	}
	return f.WaitVMIPhase(vmiName, v1.Running, time.Minute)
}
