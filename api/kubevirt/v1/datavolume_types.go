package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataVolumeTemplateSpec is a CDI DataVolume a VirtualMachine asks to be created with it.
// The schema is CDI's (cdi.kubevirt.io/v1beta1), so KubeVirt manifests decode; without CDI
// in the cluster, admission refuses VMs that use it and says so.
type DataVolumeTemplateSpec struct {
	// +optional
	metav1.TypeMeta `json:",inline"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +nullable
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec       CDIDataVolumeSpec `json:"spec"`
}

// CDIDataVolumeSpec is CDI's DataVolumeSpec.
type CDIDataVolumeSpec struct {
	// +optional
	Source *CDIDataVolumeSource `json:"source,omitempty"`
	// +optional
	SourceRef *CDIDataVolumeSourceRef `json:"sourceRef,omitempty"`
	// +optional
	PVC *k8sv1.PersistentVolumeClaimSpec `json:"pvc,omitempty"`
	// +optional
	Storage *CDIStorageSpec `json:"storage,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// +optional
	ContentType string `json:"contentType,omitempty"`
	// +optional
	Checkpoints []CDIDataVolumeCheckpoint `json:"checkpoints,omitempty"`
	// +optional
	FinalCheckpoint bool `json:"finalCheckpoint,omitempty"`
	// +optional
	Preallocation *bool `json:"preallocation,omitempty"`
}

// CDIDataVolumeSource is where CDI fills the volume from: one of its fields.
type CDIDataVolumeSource struct {
	// +optional
	HTTP *CDIURLSource `json:"http,omitempty"`
	// +optional
	S3 *CDIURLSource `json:"s3,omitempty"`
	// +optional
	GCS *CDIURLSource `json:"gcs,omitempty"`
	// +optional
	Registry *CDIRegistrySource `json:"registry,omitempty"`
	// +optional
	PVC *CDIObjectSource `json:"pvc,omitempty"`
	// +optional
	Snapshot *CDIObjectSource `json:"snapshot,omitempty"`
	// +optional
	Upload *CDIEmptySource `json:"upload,omitempty"`
	// +optional
	Blank *CDIEmptySource `json:"blank,omitempty"`
	// +optional
	Imageio *CDIURLSource `json:"imageio,omitempty"`
	// +optional
	VDDK *CDIVDDKSource `json:"vddk,omitempty"`
}

// CDIURLSource is CDI's http, s3, gcs and imageio sources (their fields merged).
type CDIURLSource struct {
	URL string `json:"url"`
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty"`
	// +optional
	ExtraHeaders []string `json:"extraHeaders,omitempty"`
	// +optional
	SecretExtraHeaders []string `json:"secretExtraHeaders,omitempty"`
	// +optional
	DiskID string `json:"diskId,omitempty"`
	// +optional
	InsecureSkipVerify *bool `json:"insecureSkipVerify,omitempty"`
}

// CDIRegistrySource is CDI's registry source.
type CDIRegistrySource struct {
	// +optional
	URL *string `json:"url,omitempty"`
	// +optional
	ImageStream *string `json:"imageStream,omitempty"`
	// +optional
	PullMethod *string `json:"pullMethod,omitempty"`
	// +optional
	SecretRef *string `json:"secretRef,omitempty"`
	// +optional
	CertConfigMap *string `json:"certConfigMap,omitempty"`
	// +optional
	Platform *CDIPlatformOptions `json:"platform,omitempty"`
}

// CDIPlatformOptions picks an image of a multi-arch registry source.
type CDIPlatformOptions struct {
	// +optional
	Architecture string `json:"architecture,omitempty"`
}

// CDIObjectSource names a PVC or snapshot to clone.
type CDIObjectSource struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// CDIEmptySource is CDI's upload and blank sources.
type CDIEmptySource struct{}

// CDIVDDKSource is CDI's VMware source.
type CDIVDDKSource struct {
	// +optional
	URL string `json:"url,omitempty"`
	// +optional
	UUID string `json:"uuid,omitempty"`
	// +optional
	BackingFile string `json:"backingFile,omitempty"`
	// +optional
	Thumbprint string `json:"thumbprint,omitempty"`
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
	// +optional
	InitImageURL string `json:"initImageURL,omitempty"`
}

// CDIDataVolumeSourceRef names a DataSource.
type CDIDataVolumeSourceRef struct {
	Kind string `json:"kind"`
	// +optional
	Namespace *string `json:"namespace,omitempty"`
	Name      string  `json:"name"`
}

// CDIStorageSpec is CDI's storage request (a PVC spec where CDI fills in the gaps).
type CDIStorageSpec struct {
	// +optional
	AccessModes []k8sv1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	Resources k8sv1.VolumeResourceRequirements `json:"resources,omitempty"`
	// +optional
	VolumeName string `json:"volumeName,omitempty"`
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// +optional
	VolumeMode *k8sv1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// +optional
	DataSource *k8sv1.TypedLocalObjectReference `json:"dataSource,omitempty"`
	// +optional
	DataSourceRef *k8sv1.TypedObjectReference `json:"dataSourceRef,omitempty"`
}

// CDIDataVolumeCheckpoint is a warm-migration checkpoint.
type CDIDataVolumeCheckpoint struct {
	Previous string `json:"previous"`
	Current  string `json:"current"`
}
