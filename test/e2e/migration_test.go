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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestMigrateCancelsATargetThatCannotBeScheduled: virtctl migrate to nodes with a label none
// has leaves the migration Scheduling with its target pod unschedulable; a second migrate is
// refused while it is in flight; virtctl migrate-cancel deletes the target pod and the
// migration, and the guest runs on where it was, never restarted.
func TestMigrateCancelsATargetThatCannotBeScheduled(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	f.CreateVM(framework.TestGuestVM("mover", v1.RunStrategyAlways))
	f.WaitVMReady("mover", bootTimeout)
	vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	source := vmi.Status.NodeName

	if out, err := f.Virtctl("migrate", "mover", "--addedNodeSelector", "vmctl.io/nowhere=true"); err != nil || !strings.Contains(out, "VM mover was scheduled to migrate") {
		t.Fatalf("virtctl migrate: %v\n%s", err, out)
	}
	var m v1.VirtualMachineInstanceMigration
	f.Eventually(time.Minute, "the migration's target pod to be unschedulable", func(ctx context.Context) (bool, error) {
		list, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=mover"})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Errorf("%d migrations, %v", len(list.Items), err)
		}
		m = list.Items[0]
		if m.Status.Phase != v1.MigrationScheduling {
			return false, fmt.Errorf("phase %s", m.Status.Phase)
		}
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationJobLabel + "=" + string(m.UID)})
		if err != nil || len(pods.Items) != 1 {
			return false, fmt.Errorf("%d target pods, %v", len(pods.Items), err)
		}
		for _, c := range pods.Items[0].Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, fmt.Errorf("target pod %s not reported unschedulable", pods.Items[0].Name)
	})
	if out, err := f.Virtctl("migrate", "mover"); err == nil || !strings.Contains(out, "in-flight migration") {
		t.Fatalf("second virtctl migrate: %v\n%s, want refused while one is in flight", err, out)
	}

	if out, err := f.Virtctl("migrate-cancel", "mover"); err != nil {
		t.Fatalf("virtctl migrate-cancel: %v\n%s", err, out)
	}
	f.Eventually(time.Minute, "target pod and migration gone", func(ctx context.Context) (bool, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.MigrationJobLabel + "=" + string(m.UID)})
		if err != nil || len(pods.Items) != 0 {
			return false, fmt.Errorf("%d target pods left, %v", len(pods.Items), err)
		}
		_, err = f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("migration still there: %v", err)
	})
	got, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != vmi.UID || got.Status.Phase != v1.Running || got.Status.NodeName != source {
		t.Fatalf("instance %s %s on %s after the cancel, want %s Running on %s", got.UID, got.Status.Phase, got.Status.NodeName, vmi.UID, source)
	}
	f.WaitVMStatus("mover", v1.VirtualMachineStatusRunning, time.Minute)
}

// TestMigrateMovesARunningGuestWithoutAReboot: virtctl migrate moves a running test guest to
// the other real node. The guest is not rebooted (same boot ID, its uptime and its console
// tick counter go on), its Service answers throughout but for a short pause, the instance
// reports the new node, and the migration ends Succeeded with its timestamps.
func TestMigrateMovesARunningGuestWithoutAReboot(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	vm := framework.TestGuestVM("mover", v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Firmware.KernelBoot.KernelArgs += " vmctl.tick=1"
	f.CreateVM(vm)
	f.WaitVMReady("mover", bootTimeout)
	if out, err := f.Virtctl("expose", "vmi", "mover", "--name", "mover", "--port", "80"); err != nil {
		t.Fatalf("virtctl expose: %v\n%s", err, out)
	}
	before := f.WaitVMIPhase("mover", v1.Running, time.Minute)
	svc, err := f.Kube.CoreV1().Services(f.Namespace).Get(f.Context(), "mover", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uptimeURL := "http://" + svc.Spec.ClusterIP + "/cgi-bin/uptime"
	var bootID string
	var upBefore float64
	f.Eventually(time.Minute, "the guest's uptime through its Service", func(ctx context.Context) (bool, error) {
		body, err := get(ctx, uptimeURL)
		if err == nil {
			_, err = fmt.Sscan(body, &bootID, &upBefore)
		}
		return err == nil, err
	})
	sourcePod := f.LauncherPod(before)

	stop := make(chan struct{})
	longest := make(chan time.Duration, 1)
	go func() { longest <- longestOutage(f.Context(), uptimeURL, stop) }()
	if out, err := f.Virtctl("migrate", "mover"); err != nil {
		t.Fatalf("virtctl migrate: %v\n%s", err, out)
	}
	var m v1.VirtualMachineInstanceMigration
	f.Eventually(3*time.Minute, "the migration to succeed", func(ctx context.Context) (bool, error) {
		list, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Errorf("%d migrations, %v", len(list.Items), err)
		}
		m = list.Items[0]
		if m.Status.Phase == v1.MigrationFailed {
			t.Fatalf("migration failed: %+v", m.Status.MigrationState)
		}
		if m.Status.Phase != v1.MigrationSucceeded {
			return false, fmt.Errorf("phase %s", m.Status.Phase)
		}
		return true, nil
	})
	// Until the source pod has ended the Service still lists it: keep the client going.
	f.Eventually(time.Minute, "the source launcher pod to end", func(ctx context.Context) (bool, error) {
		p, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, sourcePod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && p.Status.Phase == corev1.PodSucceeded, err
	})
	time.Sleep(3 * time.Second)
	close(stop)
	outage := <-longest
	t.Logf("longest pause of the Service during the migration: %s", outage)
	if outage > 20*time.Second {
		t.Errorf("the Service did not answer for %s during the migration", outage)
	}

	after := f.WaitVMIPhase("mover", v1.Running, time.Minute)
	if after.UID != before.UID || after.Status.NodeName == before.Status.NodeName {
		t.Fatalf("instance %s on %s after the migration, want %s on the other node than %s", after.UID, after.Status.NodeName, before.UID, before.Status.NodeName)
	}
	s := m.Status.MigrationState
	if s == nil || !s.Completed || s.Failed || s.StartTimestamp == nil || s.EndTimestamp == nil || s.TargetNode != after.Status.NodeName {
		t.Fatalf("migration state %+v, want completed to %s with timestamps", s, after.Status.NodeName)
	}
	var body string
	f.Eventually(time.Minute, "the moved guest to answer through its Service", func(ctx context.Context) (bool, error) {
		body, err = get(ctx, uptimeURL)
		return err == nil, err
	})
	var bootAfter string
	var upAfter float64
	if _, err := fmt.Sscan(body, &bootAfter, &upAfter); err != nil || bootAfter != bootID || upAfter <= upBefore {
		t.Fatalf("guest says %q after the migration, want boot %s and more than %.1f s up", body, bootID, upBefore)
	}
	console := f.Kubectl("logs", s.TargetPod, "-c", "guest-console-log")
	if strings.Contains(console, framework.GuestMarker) || !strings.Contains(console, "VMCTL-TICK") {
		t.Errorf("the target's console shows a boot or no tick:\n%s", console)
	}
	f.WaitVMStatus("mover", v1.VirtualMachineStatusRunning, time.Minute)
}

// longestOutage polls url until stop closes (at most ten minutes) and returns the longest
// time it did not answer.
func longestOutage(ctx context.Context, url string, stop <-chan struct{}) time.Duration {
	var longest time.Duration
	var downSince time.Time
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			return longest
		case <-time.After(200 * time.Millisecond):
		}
		_, err := getWithin(ctx, url, time.Second)
		switch {
		case err != nil && downSince.IsZero():
			downSince = time.Now()
		case err == nil && !downSince.IsZero():
			longest = max(longest, time.Since(downSince))
			downSince = time.Time{}
		}
	}
	return longest
}

// TestDrainLiveMigratesTheNodesVMs: three VMs with evictionStrategy LiveMigrate run on one
// node; kubectl drain of that node refuses their launcher pods' evictions while it migrates
// them to the other node (at most two leaving the node at once, virt-controller's limit), and
// completes once they left. None is rebooted.
func TestDrainLiveMigratesTheNodesVMs(t *testing.T) {
	f := framework.New(t)
	nodes := f.RealNodes(2)
	drained, kept := nodes[len(nodes)-1].Name, nodes[0].Name
	t.Cleanup(func() {
		f.Kubectl("uncordon", kept)
		f.Kubectl("uncordon", drained)
	})
	f.Kubectl("cordon", kept) // every VM on the node to drain
	names := []string{"mover-a", "mover-b", "mover-c"}
	for _, name := range names {
		vm := framework.TestGuestVM(name, v1.RunStrategyAlways)
		vm.Spec.Template.Spec.EvictionStrategy = ptr.To(v1.EvictionStrategyLiveMigrate)
		f.CreateVM(vm)
	}
	boots := map[string]string{}
	uids := map[string]types.UID{}
	for _, name := range names {
		f.WaitVMReady(name, bootTimeout)
		vmi := f.WaitVMIPhase(name, v1.Running, time.Minute)
		if vmi.Status.NodeName != drained {
			t.Fatalf("%s runs on %s, want %s", name, vmi.Status.NodeName, drained)
		}
		uids[name] = vmi.UID
		boots[name] = guestBoot(t, f, vmi)
	}
	f.Kubectl("uncordon", kept)

	out := f.Kubectl("drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10m")
	t.Logf("kubectl drain:\n%s", out)

	list, err := f.Virt.KubevirtV1().VirtualMachineInstanceMigrations(f.Namespace).List(f.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var spans [][2]time.Time
	for _, m := range list.Items {
		if m.Status.Phase != v1.MigrationSucceeded {
			t.Errorf("migration %s of %s: %s %+v", m.Name, m.Spec.VMIName, m.Status.Phase, m.Status.MigrationState)
		}
		var start, end time.Time
		for _, ts := range m.Status.PhaseTransitionTimestamps {
			switch ts.Phase {
			case v1.MigrationScheduling:
				start = ts.PhaseTransitionTimestamp.Time
			case v1.MigrationSucceeded, v1.MigrationFailed:
				end = ts.PhaseTransitionTimestamp.Time
			}
		}
		spans = append(spans, [2]time.Time{start, end})
	}
	if most := mostAtOnce(spans); most > 2 {
		t.Errorf("%d migrations left %s at once, want at most 2", most, drained)
	}
	for _, name := range names {
		vmi := f.WaitVMIPhase(name, v1.Running, time.Minute)
		if vmi.UID != uids[name] || vmi.Status.NodeName != kept {
			t.Errorf("%s: instance %s on %s after the drain, want %s on %s", name, vmi.UID, vmi.Status.NodeName, uids[name], kept)
		}
		if boot := guestBoot(t, f, vmi); boot != boots[name] {
			t.Errorf("%s rebooted: boot %s, was %s", name, boot, boots[name])
		}
	}
}

// guestBoot is the boot ID the guest of a running instance reports on its pod IP.
func guestBoot(t *testing.T, f *framework.Framework, vmi *v1.VirtualMachineInstance) string {
	t.Helper()
	boot, _, _ := strings.Cut(guestCGI(t, f, vmi, "uptime"), " ")
	return boot
}

// guestCGI is what the test guest's /cgi-bin/<name> answers, fetched from its pod address,
// trimmed.
func guestCGI(t *testing.T, f *framework.Framework, vmi *v1.VirtualMachineInstance, name string) string {
	t.Helper()
	var body string
	f.Eventually(bootTimeout, name+" of "+vmi.Name, func(ctx context.Context) (bool, error) {
		fresh, err := f.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil || len(fresh.Status.Interfaces) == 0 {
			return false, fmt.Errorf("no address yet: %v", err)
		}
		body, err = get(ctx, "http://"+fresh.Status.Interfaces[0].IP+"/cgi-bin/"+name)
		body = strings.TrimSpace(body)
		return err == nil && body != "", err
	})
	return body
}

// mostAtOnce is the largest number of spans running at one time: the most that contain the
// start of one of them.
func mostAtOnce(spans [][2]time.Time) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !s[0].Before(o[0]) && s[0].Before(o[1]) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
