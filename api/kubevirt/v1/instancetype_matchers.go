package v1

// InferFromVolumeFailurePolicy is what happens when an instance type or preference cannot be
// inferred from a volume.
//
// +kubebuilder:validation:Enum=Reject;Ignore
type InferFromVolumeFailurePolicy string

const (
	RejectInferFromVolumeFailure InferFromVolumeFailurePolicy = "Reject"
	IgnoreInferFromVolumeFailure InferFromVolumeFailurePolicy = "Ignore"
)

// The kinds a matcher names, and the defaults of an empty kind.
const (
	InstancetypeKind        = "VirtualMachineInstancetype"
	ClusterInstancetypeKind = "VirtualMachineClusterInstancetype"
	PreferenceKind          = "VirtualMachinePreference"
	ClusterPreferenceKind   = "VirtualMachineClusterPreference"
)

// InstancetypeMatcher names the instance type (instancetype.kubevirt.io) that sizes the
// VirtualMachine's instances.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) || has(self.inferFromVolume)",message="Either Name or InferFromVolume should be provided within the instancetype matcher"
type InstancetypeMatcher struct {
	// Name is the VirtualMachineInstancetype or VirtualMachineClusterInstancetype.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind is VirtualMachineInstancetype (in the VM's namespace) or
	// VirtualMachineClusterInstancetype, the default. Lower-case resource names are accepted.
	// +optional
	Kind string `json:"kind,omitempty"`
	// RevisionName is a ControllerRevision holding the copy of the instance type to use.
	// The controller records the copy it takes in status.instancetypeRef instead; set this
	// to pin the VM to a copy of your choosing.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// InferFromVolume names a volume whose source's labels give the instance type. No volume
	// kind of this platform carries them: admission refuses it unless the failure policy is
	// Ignore.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// InferFromVolumeFailurePolicy is Reject (the default) or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// PreferenceMatcher names the preference (instancetype.kubevirt.io) whose values fill what the
// VirtualMachine's template leaves unset.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) || has(self.inferFromVolume)",message="Either Name or InferFromVolume should be provided within the preference matcher"
type PreferenceMatcher struct {
	// Name is the VirtualMachinePreference or VirtualMachineClusterPreference.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind is VirtualMachinePreference (in the VM's namespace) or
	// VirtualMachineClusterPreference, the default.
	// +optional
	Kind string `json:"kind,omitempty"`
	// RevisionName is a ControllerRevision holding the copy of the preference to use.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// InferFromVolume: see InstancetypeMatcher.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// InstancetypeStatusRef is the instance type or preference a VirtualMachine runs with, and
// the ControllerRevision that pins its copy: later starts use the copy, so editing the
// instance type never changes the VM.
type InstancetypeStatusRef struct {
	// Name of the instance type or preference.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind of the instance type or preference.
	// +optional
	Kind string `json:"kind,omitempty"`
	// ControllerRevisionRef is the ControllerRevision holding the copy in use.
	// +optional
	ControllerRevisionRef *ControllerRevisionRef `json:"controllerRevisionRef,omitempty"`
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty"`
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty"`
}

// ControllerRevisionRef names a ControllerRevision in the VirtualMachine's namespace.
type ControllerRevisionRef struct {
	// +optional
	Name string `json:"name,omitempty"`
}

// InstancetypeKindOf is the kind a matcher names, its default filled in and the lower-case
// resource spellings KubeVirt accepts normalised; "" for a kind that is none of them.
func InstancetypeKindOf(kind string) string {
	switch kind {
	case "", ClusterInstancetypeKind, "virtualmachineclusterinstancetype", "virtualmachineclusterinstancetypes":
		return ClusterInstancetypeKind
	case InstancetypeKind, "virtualmachineinstancetype", "virtualmachineinstancetypes":
		return InstancetypeKind
	}
	return ""
}

// PreferenceKindOf is InstancetypeKindOf for preferences.
func PreferenceKindOf(kind string) string {
	switch kind {
	case "", ClusterPreferenceKind, "virtualmachineclusterpreference", "virtualmachineclusterpreferences":
		return ClusterPreferenceKind
	case PreferenceKind, "virtualmachinepreference", "virtualmachinepreferences":
		return PreferenceKind
	}
	return ""
}

// NamesInstancetypeOrPreference reports whether the VirtualMachine's instances are expanded
// from an instance type or a preference, not from its template alone.
func (s *VirtualMachineSpec) NamesInstancetypeOrPreference() bool {
	return s.Instancetype != nil || s.Preference != nil
}
