package vm

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A running instance keeps the spec it was created with: a template edited meanwhile takes
// effect at the next start. KubeVirt says so on the VM with its RestartRequired condition, and
// marks each instance with the VM generation it came from.
const (
	// GenerationAnnotation is KubeVirt's: the VM's generation when it created the instance.
	GenerationAnnotation = "kubevirt.io/vm-generation"
	// TemplateHashAnnotation is a hash of the template spec the instance was created from.
	// The generation alone cannot tell: a run strategy change bumps it too.
	TemplateHashAnnotation = "vmctl.kubevirt.io/template-hash"

	restartRequiredMessage = "a non-live-updatable field was changed in the template spec"
)

// templateHash is a hash of the VM's template spec. encoding/json writes struct fields in
// order and map keys sorted, so equal specs hash alike.
func templateHash(vm *v1.VirtualMachine) string {
	if vm.Spec.Template == nil { // the CRD requires one
		return ""
	}
	data, err := json.Marshal(&vm.Spec.Template.Spec)
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	_, _ = h.Write(data)
	return strconv.FormatUint(h.Sum64(), 36)
}

// markOrigin records on a new instance which generation and template of the VM it runs.
func markOrigin(vmi *v1.VirtualMachineInstance, vm *v1.VirtualMachine) {
	if vmi.Annotations == nil {
		vmi.Annotations = map[string]string{}
	}
	vmi.Annotations[GenerationAnnotation] = strconv.FormatInt(vm.Generation, 10)
	vmi.Annotations[TemplateHashAnnotation] = templateHash(vm)
}

// restartRequired: the live instance runs a template spec other than the VM's. An instance
// without the mark (made before it existed) says nothing either way.
func restartRequired(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) bool {
	if vmi == nil || vmi.Status.Phase.IsFinal() || vmi.DeletionTimestamp != nil {
		return false
	}
	ran, ok := vmi.Annotations[TemplateHashAnnotation]
	return ok && ran != templateHash(vm)
}

// setRestartRequired keeps the VM's RestartRequired condition in step with its instance.
func setRestartRequired(s *v1.VirtualMachineStatus, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, now metav1.Time) {
	if !restartRequired(vm, vmi) {
		removeCondition(s, v1.VirtualMachineRestartRequired)
		return
	}
	setCondition(s, v1.VirtualMachineCondition{Type: v1.VirtualMachineRestartRequired, Status: corev1.ConditionTrue,
		Message: restartRequiredMessage}, now)
}
