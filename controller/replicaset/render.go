package replicaset

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// renderInstance is one replica of the replica set's template. The API server completes the
// generated name, so replicas are named <rs>-<random>.
func renderInstance(rs *v1.VirtualMachineInstanceReplicaSet) *v1.VirtualMachineInstance {
	tmpl := rs.Spec.Template
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    rs.Name + "-",
			Namespace:       rs.Namespace,
			Labels:          maps.Clone(tmpl.ObjectMeta.Labels),
			Annotations:     maps.Clone(tmpl.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*ownerRef(rs)},
			// Set at creation so the instance controller need not write it.
			Finalizers: []string{v1.VirtualMachineInstanceFinalizer},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
}
