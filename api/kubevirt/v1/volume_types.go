package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is the source of the disk of the same name.
type Volume struct {
	// +kubebuilder:validation:MinLength=1
	Name         string `json:"name"`
	VolumeSource `json:",inline"`
}

// VolumeSource is exactly one kind of volume.
type VolumeSource struct {
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty"`
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty"`
	// +optional
	CloudInitConfigDrive *CloudInitConfigDriveSource `json:"cloudInitConfigDrive,omitempty"`
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty"`
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// Ephemeral is a PVC under a throwaway copy-on-write overlay: the guest writes to the
	// overlay, the claim is only read.
	// +optional
	Ephemeral *EphemeralVolumeSource `json:"ephemeral,omitempty"`
	// ConfigMap presents a ConfigMap's keys as files on an ISO disk.
	// +optional
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty"`
	// Secret presents a Secret's keys as files on an ISO disk.
	// +optional
	Secret *SecretVolumeSource `json:"secret,omitempty"`
	// ServiceAccount presents the service account's token, CA and namespace on an ISO disk.
	// +optional
	ServiceAccount *ServiceAccountVolumeSource `json:"serviceAccount,omitempty"`
	// DownwardAPI presents pod fields on an ISO disk.
	// +optional
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty"`
	// DataVolume is a PVC that CDI creates and fills; needs CDI.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty"`
	// HostDisk is a disk image file on the node; needs virt-api's HostDisk feature gate.
	// +optional
	HostDisk *HostDisk `json:"hostDisk,omitempty"`
	// Sysprep is a Windows answer file on a CD-ROM.
	// +optional
	Sysprep *SysprepSource `json:"sysprep,omitempty"`
	// DownwardMetrics is a small disk of host metrics for vm-dump-metrics.
	// +optional
	DownwardMetrics *DownwardMetricsVolumeSource `json:"downwardMetrics,omitempty"`
}

// EphemeralVolumeSource wraps a PVC in a copy-on-write overlay.
type EphemeralVolumeSource struct {
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
}

// ConfigMapVolumeSource presents a ConfigMap to the guest.
type ConfigMapVolumeSource struct {
	// Name of the ConfigMap in the instance's namespace.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Optional *bool `json:"optional,omitempty"`
	// VolumeLabel is the ISO's label, e.g. cidata, config-2 or OEMDRV.
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// SecretVolumeSource presents a Secret to the guest.
type SecretVolumeSource struct {
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// +optional
	Optional *bool `json:"optional,omitempty"`
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// ServiceAccountVolumeSource presents a service account's credentials to the guest.
type ServiceAccountVolumeSource struct {
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// DownwardAPIVolumeSource presents pod fields to the guest.
type DownwardAPIVolumeSource struct {
	// +optional
	Fields []k8sv1.DownwardAPIVolumeFile `json:"fields,omitempty"`
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty"`
}

// DataVolumeSource names a CDI DataVolume.
type DataVolumeSource struct {
	Name string `json:"name"`
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty"`
}

// HostDisk is a disk image on the node's file system.
type HostDisk struct {
	// Path is the image's absolute path on the node.
	Path string `json:"path"`
	// Type is Disk (the image exists) or DiskOrCreate (a sparse one of Capacity is made).
	Type string `json:"type"`
	// +optional
	Capacity resource.Quantity `json:"capacity,omitempty"`
	// +optional
	Shared *bool `json:"shared,omitempty"`
}

// The hostDisk types, KubeVirt's names.
const (
	HostDiskExists         = "Disk"
	HostDiskExistsOrCreate = "DiskOrCreate"
)

// SysprepSource is a Windows answer file from a Secret or a ConfigMap.
type SysprepSource struct {
	// +optional
	Secret *k8sv1.LocalObjectReference `json:"secret,omitempty"`
	// +optional
	ConfigMap *k8sv1.LocalObjectReference `json:"configMap,omitempty"`
}

// DownwardMetricsVolumeSource is the vhostmd-compatible metrics disk.
type DownwardMetricsVolumeSource struct{}

// ContainerDiskSource is a disk image shipped in a container image; writes are discarded.
type ContainerDiskSource struct {
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
	// Path is the disk image inside the container; defaults to the first file under /disk.
	// +optional
	Path string `json:"path,omitempty"`
	// +optional
	ImagePullPolicy k8sv1.PullPolicy `json:"imagePullPolicy,omitempty"`
}

// CloudInitNoCloudSource is cloud-init NoCloud user and network data, presented as a disk.
type CloudInitNoCloudSource struct {
	// +optional
	UserDataSecretRef *k8sv1.LocalObjectReference `json:"secretRef,omitempty"`
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// +optional
	UserData string `json:"userData,omitempty"`
	// +optional
	NetworkDataSecretRef *k8sv1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// CloudInitConfigDriveSource is cloud-init (or cloudbase-init) user and network data in the
// OpenStack config-drive layout, presented as a disk labelled config-2.
type CloudInitConfigDriveSource struct {
	// +optional
	UserDataSecretRef *k8sv1.LocalObjectReference `json:"secretRef,omitempty"`
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// +optional
	UserData string `json:"userData,omitempty"`
	// +optional
	NetworkDataSecretRef *k8sv1.LocalObjectReference `json:"networkDataSecretRef,omitempty"`
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty"`
	// +optional
	NetworkData string `json:"networkData,omitempty"`
}

// EmptyDiskSource is a blank sparse disk that lives as long as the instance.
type EmptyDiskSource struct {
	Capacity resource.Quantity `json:"capacity"`
}

// PersistentVolumeClaimVolumeSource is a disk backed by a PVC. Same JSON shape as the core
// type KubeVirt embeds; spelled out because the apply-configuration generator cannot embed it.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the PVC in the instance's namespace.
	// +kubebuilder:validation:MinLength=1
	ClaimName string `json:"claimName"`
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
	// Hotpluggable marks a hotplugged volume; this platform has no hotplug.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty"`
}

// Network is a network interfaces attach to by name.
type Network struct {
	// +kubebuilder:validation:MinLength=1
	Name          string `json:"name"`
	NetworkSource `json:",inline"`
}

// NetworkSource is exactly one kind of network.
type NetworkSource struct {
	// +optional
	Pod *PodNetwork `json:"pod,omitempty"`
	// Multus is a secondary network from a NetworkAttachmentDefinition; needs Multus.
	// +optional
	Multus *MultusNetwork `json:"multus,omitempty"`
}

// MultusNetwork names a NetworkAttachmentDefinition ([namespace/]name).
type MultusNetwork struct {
	NetworkName string `json:"networkName"`
	// +optional
	Default bool `json:"default,omitempty"`
}

// PodNetwork is the pod's own network.
type PodNetwork struct {
	// VMNetworkCIDR is the guest-side network of a masquerade interface; defaults to 10.0.2.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty"`
	// VMIPv6NetworkCIDR is the IPv6 guest-side network; defaults to fd10:0:2::/120.
	// +optional
	VMIPv6NetworkCIDR string `json:"vmIPv6NetworkCIDR,omitempty"`
}
