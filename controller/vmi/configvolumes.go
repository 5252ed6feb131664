package vmi

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// serviceAccountTokenSeconds is how long the token on a serviceAccount disk stays valid. The
// disk is written once, at start, so the guest gets one token; KubeVirt's disk does the same.
const serviceAccountTokenSeconds = 3600 * 24

// configVolumeSource is the pod volume of an instance's config volume (a sysprep volume is a
// ConfigMap's or a Secret's). ConfigMaps and Secrets are optional in the pod: a missing one
// must not hold the pod in ContainerCreating, where nobody says why; virt-handler fails the
// instance saying which is missing instead.
func configVolumeSource(vol v1.Volume) (corev1.VolumeSource, bool) {
	switch {
	case vol.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: vol.ConfigMap.Name}, Optional: ptr.To(true)}}, true
	case vol.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: vol.Secret.SecretName, Optional: ptr.To(true)}}, true
	case vol.Sysprep != nil && vol.Sysprep.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: *vol.Sysprep.ConfigMap, Optional: ptr.To(true)}}, true
	case vol.Sysprep != nil && vol.Sysprep.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: vol.Sysprep.Secret.Name, Optional: ptr.To(true)}}, true
	case vol.DownwardAPI != nil:
		return corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: vol.DownwardAPI.Fields}}, true
	case vol.ServiceAccount != nil:
		return corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](serviceAccountTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}, true
	}
	return corev1.VolumeSource{}, false
}

// serviceAccountName is the service account a serviceAccount volume names: the launcher pod
// runs as it, so the kubelet can issue its token.
func serviceAccountName(vmi *v1.VirtualMachineInstance) string {
	for _, vol := range vmi.Spec.Volumes {
		if vol.ServiceAccount != nil {
			return vol.ServiceAccount.ServiceAccountName
		}
	}
	return ""
}
