package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestInvalidVirtualMachinesAreRejected checks the CRD's server-side validation: each bad
// spec is refused with an Invalid error whose message names the field and the reason.
func TestInvalidVirtualMachinesAreRejected(t *testing.T) {
	memory := func(vm *v1.VirtualMachine, kind, value string) {
		list := k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse(value)}
		if kind == "requests" {
			vm.Spec.Template.Spec.Domain.Resources.Requests = list
		} else {
			vm.Spec.Template.Spec.Domain.Resources.Limits = list
		}
	}
	tests := []struct {
		name   string
		mutate func(*v1.VirtualMachine)
		want   string
	}{
		{
			name:   "running and runStrategy together",
			mutate: func(vm *v1.VirtualMachine) { vm.Spec.Running = ptr.To(true) },
			want:   "spec.running and spec.runStrategy are mutually exclusive",
		},
		{
			name:   "unknown run strategy",
			mutate: func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy = ptr.To(v1.VirtualMachineRunStrategy("Sometimes")) },
			want:   `spec.runStrategy: Unsupported value: "Sometimes"`,
		},
		{
			name:   "zero memory request",
			mutate: func(vm *v1.VirtualMachine) { memory(vm, "requests", "0") },
			want:   "spec.domain.resources.requests.memory must be greater than zero",
		},
		{
			name:   "request above limit",
			mutate: func(vm *v1.VirtualMachine) { memory(vm, "requests", "1Gi"); memory(vm, "limits", "64Mi") },
			want:   "spec.domain.resources.requests.memory must not be greater than spec.domain.resources.limits.memory",
		},
		{
			name:   "no memory at all",
			mutate: func(vm *v1.VirtualMachine) { vm.Spec.Template.Spec.Domain.Resources.Requests = nil },
			want:   "no memory requested",
		},
		{
			name: "zero guest memory",
			mutate: func(vm *v1.VirtualMachine) {
				vm.Spec.Template.Spec.Domain.Memory = &v1.Memory{Guest: ptr.To(resource.MustParse("0"))}
			},
			want: "spec.domain.memory.guest must be greater than zero",
		},
	}
	ns := newNamespace(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := newVM("invalid")
			tt.mutate(vm)
			_, err := virt.KubevirtV1().VirtualMachines(ns).Create(context.Background(), vm, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create error = %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// TestKubectlShowsTheMutualExclusionError is what a user sees applying such a manifest.
func TestKubectlShowsTheMutualExclusionError(t *testing.T) {
	ns := newNamespace(t)
	manifest := filepath.Join(t.TempDir(), "vm.yaml")
	err := os.WriteFile(manifest, []byte(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: both
spec:
  running: true
  runStrategy: Always
  template:
    spec:
      domain:
        resources:
          requests:
            memory: 64M
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kubectl(t, "apply", "-n", ns, "-f", manifest)
	if err == nil {
		t.Fatalf("kubectl apply accepted a VM with both running and runStrategy:\n%s", out)
	}
	if !strings.Contains(out, "spec.running and spec.runStrategy are mutually exclusive") {
		t.Errorf("kubectl output does not explain the rejection:\n%s", out)
	}
}
