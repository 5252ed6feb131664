package vm

import (
	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// Annotations KubeVirt puts on an instance to say which instance type and preference it was
// expanded from.
const (
	InstancetypeAnnotation        = "kubevirt.io/instancetype-name"
	ClusterInstancetypeAnnotation = "kubevirt.io/cluster-instancetype-name"
	PreferenceAnnotation          = "kubevirt.io/preference-name"
	ClusterPreferenceAnnotation   = "kubevirt.io/cluster-preference-name"
)

// usesInstancetypes: the VM names an instance type or a preference.
func usesInstancetypes(vm *v1.VirtualMachine) bool { return vm.Spec.NamesInstancetypeOrPreference() }

// instanceTemplate is the VM's template with its pinned instance type and preference (either
// may be nil) expanded; the template itself when the VM names neither. A template that sets
// what the instance type sets is Invalid: admission refused it, so the type changed since.
func instanceTemplate(vm *v1.VirtualMachine, it *itv1beta1.VirtualMachineInstancetypeSpec, pref *itv1beta1.VirtualMachinePreferenceSpec) (*v1.VirtualMachineInstanceTemplateSpec, error) {
	if !usesInstancetypes(vm) {
		return vm.Spec.Template, nil
	}
	tmpl := vm.Spec.Template.DeepCopy()
	// Every volume gets a disk (defaulting would add the missing ones with the default bus);
	// added here, before the preference, they take the preferred bus instead.
	has := map[string]bool{}
	for _, d := range tmpl.Spec.Domain.Devices.Disks {
		has[d.Name] = true
	}
	for _, v := range tmpl.Spec.Volumes {
		if !has[v.Name] {
			tmpl.Spec.Domain.Devices.Disks = append(tmpl.Spec.Domain.Devices.Disks, v1.Disk{Name: v.Name})
		}
	}
	tmpl, errs := instancetype.Expand(tmpl, it, pref)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(vmKind.GroupKind(), vm.Name, errs)
	}
	return tmpl, nil
}

// renderInstance is the instance a VirtualMachine runs: tmpl (instanceTemplate's), under the
// VirtualMachine's name, controlled by it, with the API's defaults.
func renderInstance(vm *v1.VirtualMachine, tmpl *v1.VirtualMachineInstanceTemplateSpec, pref *itv1beta1.VirtualMachinePreferenceSpec) *v1.VirtualMachineInstance {
	vmi := controller.NewInstance(tmpl, vm.Namespace, ownerRef(vm))
	vmi.Name = vm.Name
	markOrigin(vmi, vm)
	if !usesInstancetypes(vm) {
		return vmi
	}
	// The preference again, for what defaulting just added (the pod network's interface
	// takes the preferred model); it fills only what is still unset.
	instancetype.ApplyPreference(pref, &vmi.Spec, &vmi.ObjectMeta)
	// The admission webhook leaves such templates undefaulted (a default would beat the
	// preference), so the machine type is defaulted here.
	v1.SetDefaultMachineType(&vmi.Spec)
	annotate := func(ref *v1.InstancetypeStatusRef, namespaced, cluster, namespacedKind string) {
		if ref == nil {
			return
		}
		key := cluster
		if ref.Kind == namespacedKind {
			key = namespaced
		}
		if vmi.Annotations == nil {
			vmi.Annotations = map[string]string{}
		}
		vmi.Annotations[key] = ref.Name
	}
	annotate(vm.Status.InstancetypeRef, InstancetypeAnnotation, ClusterInstancetypeAnnotation, v1.InstancetypeKind)
	annotate(vm.Status.PreferenceRef, PreferenceAnnotation, ClusterPreferenceAnnotation, v1.PreferenceKind)
	return vmi
}

// newUUID is a random (version 4) UUID: unique across VMs, whatever their names.
func newUUID() types.UID { return types.UID(uuid.NewString()) }
