package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "instancetype.kubevirt.io"

// SchemeGroupVersion is instancetype.kubevirt.io/v1beta1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

var (
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

// Resource turns a plural resource name into a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// Kind turns a kind name into a group-qualified GroupKind.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&VirtualMachineInstancetype{}, &VirtualMachineInstancetypeList{},
		&VirtualMachineClusterInstancetype{}, &VirtualMachineClusterInstancetypeList{},
		&VirtualMachinePreference{}, &VirtualMachinePreferenceList{},
		&VirtualMachineClusterPreference{}, &VirtualMachineClusterPreferenceList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Kinds, resources and the labels KubeVirt puts on the ControllerRevisions that pin a
// VirtualMachine to one generation of an instance type or preference.
const (
	InstancetypeKind        = "VirtualMachineInstancetype"
	ClusterInstancetypeKind = "VirtualMachineClusterInstancetype"
	PreferenceKind          = "VirtualMachinePreference"
	ClusterPreferenceKind   = "VirtualMachineClusterPreference"

	InstancetypeResource        = "virtualmachineinstancetypes"
	ClusterInstancetypeResource = "virtualmachineclusterinstancetypes"
	PreferenceResource          = "virtualmachinepreferences"
	ClusterPreferenceResource   = "virtualmachineclusterpreferences"

	ControllerRevisionObjectGenerationLabel = "instancetype.kubevirt.io/object-generation"
	ControllerRevisionObjectKindLabel       = "instancetype.kubevirt.io/object-kind"
	ControllerRevisionObjectNameLabel       = "instancetype.kubevirt.io/object-name"
	ControllerRevisionObjectUIDLabel        = "instancetype.kubevirt.io/object-uid"
	ControllerRevisionObjectVersionLabel    = "instancetype.kubevirt.io/object-version"
)
