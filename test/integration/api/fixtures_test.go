package api

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func instanceSpec() v1.VirtualMachineInstanceSpec {
	return v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("64Mi")}},
			Devices:   v1.Devices{Disks: []v1.Disk{{Name: "disk"}}},
		},
		Volumes: []v1.Volume{{Name: "disk", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "guest:latest"}}}},
	}
}

func template(labels map[string]string) *v1.VirtualMachineInstanceTemplateSpec {
	return &v1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: instanceSpec()}
}

func newVM(name string) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.VirtualMachineSpec{RunStrategy: ptr.To(v1.RunStrategyHalted), Template: template(map[string]string{"vm": name})},
	}
}

func newVMI(name string) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: instanceSpec()}
}

func newVMIRS(name string, replicas int32) *v1.VirtualMachineInstanceReplicaSet {
	labels := map[string]string{"rs": name}
	return &v1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: template(labels),
		},
	}
}
