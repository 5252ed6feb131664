package controller

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// NewInstance is an instance of a template, controlled by owner. The caller names it.
func NewInstance(tmpl *v1.VirtualMachineInstanceTemplateSpec, namespace string, owner *metav1.OwnerReference) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Labels:          maps.Clone(tmpl.ObjectMeta.Labels),
			Annotations:     maps.Clone(tmpl.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*owner},
			// Set at creation so the instance controller need not write it.
			Finalizers: []string{v1.VirtualMachineInstanceFinalizer},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	// The admission webhook skips the controller's own writes (they are the hot path of every
	// start), so the controller applies the same defaults itself.
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	return vmi
}

// BlockingControllerRef is the controller reference an owner puts on its instances: a
// foreground delete of the owner waits for them (blockOwnerDeletion).
func BlockingControllerRef(owner metav1.Object, kind schema.GroupVersionKind) *metav1.OwnerReference {
	ref := metav1.NewControllerRef(owner, kind)
	ref.BlockOwnerDeletion = ptr.To(true)
	return ref
}
