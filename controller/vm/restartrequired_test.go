package vm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestRestartRequired(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	ran := func(phase v1.VirtualMachineInstancePhase, from *v1.VirtualMachine) *v1.VirtualMachineInstance {
		vmi := instance(phase)
		markOrigin(vmi, from)
		return vmi
	}
	edited := vm.DeepCopy()
	edited.Generation++
	edited.Spec.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("128Mi")
	restrategized := vm.DeepCopy()
	restrategized.Generation++
	restrategized.Spec.RunStrategy = ptr.To(v1.RunStrategyManual)
	relabelled := vm.DeepCopy()
	relabelled.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "db"}
	deleting := ran(v1.Running, vm)
	deleting.DeletionTimestamp = &metav1.Time{}

	tests := []struct {
		name string
		vm   *v1.VirtualMachine
		vmi  *v1.VirtualMachineInstance
		want bool
	}{
		{"instance runs the template", vm, ran(v1.Running, vm), false},
		{"template spec edited since", edited, ran(v1.Running, vm), true},
		{"edited before the instance was scheduled", edited, ran(v1.Scheduling, vm), true},
		{"run strategy changed: the generation moves, the template not", restrategized, ran(v1.Running, vm), false},
		{"template labels changed", relabelled, ran(v1.Running, vm), false},
		{"instance ended", edited, ran(v1.Succeeded, vm), false},
		{"instance being deleted", edited, deleting, false},
		{"instance made before the mark", edited, instance(v1.Running), false},
		{"no instance", edited, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := restartRequired(tt.vm, tt.vmi); got != tt.want {
				t.Errorf("restartRequired = %v, want %v", got, tt.want)
			}
		})
	}
	if got := ran(v1.Running, edited).Annotations[GenerationAnnotation]; got != "2" {
		t.Errorf("%s = %q, want the VM's generation 2", GenerationAnnotation, got)
	}
}
