package replicaset

import (
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// renderInstance is one replica of the replica set's template. The API server completes the
// generated name, so replicas are named <rs>-<random>.
func renderInstance(rs *v1.VirtualMachineInstanceReplicaSet) *v1.VirtualMachineInstance {
	vmi := controller.NewInstance(rs.Spec.Template, rs.Namespace, ownerRef(rs))
	vmi.GenerateName = rs.Name + "-"
	return vmi
}
