package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
)

func example(t *testing.T, name string) string {
	root, err := apiserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "examples", name)
}

// TestSeedManifestsApply applies KubeVirt's documented examples with kubectl (strict field
// validation, so an unknown field fails) and reads them back through the v1 client.
func TestSeedManifestsApply(t *testing.T) {
	tests := []struct{ file, name string }{
		{"vm-cirros-v1alpha3.yaml", "vm-cirros"},
		{"vm-cirros-v1.yaml", "vm-cirros-v1"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ns := newNamespace(t)
			if out, err := kubectl(t, "apply", "-n", ns, "-f", example(t, tt.file)); err != nil {
				t.Fatalf("kubectl apply: %v\n%s", err, out)
			}
			vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(context.Background(), tt.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if vm.Spec.Running == nil || *vm.Spec.Running {
				t.Errorf("spec.running = %v, want false", vm.Spec.Running)
			}
			if got := vm.Spec.Template.ObjectMeta.Labels["kubevirt.io/vm"]; got != tt.name {
				t.Errorf("template label kubevirt.io/vm = %q, want %q (template metadata was pruned?)", got, tt.name)
			}
			if n := len(vm.Spec.Template.Spec.Volumes); n != 2 {
				t.Errorf("%d volumes, want 2", n)
			}
		})
	}
}

func TestKubectlGetVMShowsStatus(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	vm, err := virt.KubevirtV1().VirtualMachines(ns).Create(ctx, newVM("shown"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm.Status.PrintableStatus = v1.VirtualMachineStatusStopped
	if _, err := virt.KubevirtV1().VirtualMachines(ns).UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := kubectl(t, "get", "vm", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get vm: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row:\n%s", out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	want := []string{"NAME", "AGE", "STATUS", "READY"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Errorf("columns %v, want %v", header, want)
	}
	if len(row) < 3 || row[0] != "shown" || row[2] != "Stopped" {
		t.Errorf("row %v, want name shown and STATUS Stopped", row)
	}
}

func TestShortNamesAndCategories(t *testing.T) {
	ns := newNamespace(t)
	for _, args := range [][]string{{"get", "vms"}, {"get", "vmis"}, {"get", "vmirs"}, {"get", "kubevirt"}} {
		if out, err := kubectl(t, append(args, "-n", ns)...); err != nil {
			t.Errorf("kubectl %v: %v\n%s", args, err, out)
		}
	}
}

func TestReplicaSetScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	rsClient := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns)
	if _, err := rsClient.Create(ctx, newVMIRS("scaled", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	scale, err := rsClient.GetScale(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if scale.Spec.Replicas != 1 {
		t.Fatalf("scale.spec.replicas = %d, want 1", scale.Spec.Replicas)
	}
	scale.Spec.Replicas = 4
	if _, err := rsClient.UpdateScale(ctx, "scaled", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	assertReplicas(t, ns, "scaled", 4)

	if out, err := kubectl(t, "scale", "vmirs", "scaled", "-n", ns, "--replicas=2"); err != nil {
		t.Fatalf("kubectl scale: %v\n%s", err, out)
	}
	assertReplicas(t, ns, "scaled", 2)
}

func assertReplicas(t *testing.T, ns, name string, want int32) {
	t.Helper()
	rs, err := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != want {
		t.Errorf("spec.replicas = %v, want %d", rs.Spec.Replicas, want)
	}
}
