package handler

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// configReader returns the files of an instance's configMap, secret, serviceAccount or
// downwardAPI volume, as the kubelet wrote them into the launcher pod's volume.
type configReader func(vol v1.Volume) (map[string][]byte, error)

// kubeletPlugins are the kubelet's directory names of the volume kinds a config volume uses.
var kubeletPlugins = map[string]string{
	"configMap":      "kubernetes.io~configmap",
	"secret":         "kubernetes.io~secret",
	"downwardAPI":    "kubernetes.io~downward-api",
	"serviceAccount": "kubernetes.io~projected",
}

// podConfigVolumes reads config volumes through the kubelet's pods directory, like podSecrets.
func podConfigVolumes(kubeletRoot string, pod *corev1.Pod) configReader {
	return func(vol v1.Volume) (map[string][]byte, error) {
		kinds := vol.SourceKinds()
		if len(kinds) != 1 || kubeletPlugins[kinds[0]] == "" {
			return nil, invalidSpec("volume %q is not a config volume", vol.Name)
		}
		return readSecretVolume(podVolumeDir(kubeletRoot, pod.UID, kubeletPlugins[kinds[0]], layout.ConfigVolume(vol.Name)))
	}
}

// errMissingConfigMap is errMissingSecret's twin for a ConfigMap volume.
var errMissingConfigMap = errors.New("missing configmap")

// missingSource is the instance's failure reason when err is a missing Secret or ConfigMap.
func missingSource(err error) string {
	switch {
	case errors.Is(err, errMissingSecret):
		return ReasonMissingSecret
	case errors.Is(err, errMissingConfigMap):
		return ReasonMissingConfigMap
	}
	return ""
}

// configISO is a config volume's disk: its files at the ISO's root, labelled volumeLabel (or
// the volume's name). A required ConfigMap or Secret with no keys is missing: the pod mounts
// it optionally, so this is where its absence shows.
func configISO(vol v1.Volume, files map[string][]byte) (string, []isoFile, error) {
	label := vol.Name
	switch {
	case vol.ConfigMap != nil:
		if len(files) == 0 && (vol.ConfigMap.Optional == nil || !*vol.ConfigMap.Optional) {
			return "", nil, fmt.Errorf("%w: volume %q: configmap %q does not exist or has no keys", errMissingConfigMap, vol.Name, vol.ConfigMap.Name)
		}
		label = labelOr(vol.ConfigMap.VolumeLabel, label)
	case vol.Secret != nil:
		if len(files) == 0 && (vol.Secret.Optional == nil || !*vol.Secret.Optional) {
			return "", nil, missingSecret("volume %q: secret %q does not exist or has no keys", vol.Name, vol.Secret.SecretName)
		}
		label = labelOr(vol.Secret.VolumeLabel, label)
	case vol.DownwardAPI != nil:
		label = labelOr(vol.DownwardAPI.VolumeLabel, label)
	}
	out := make([]isoFile, 0, len(files))
	for _, name := range sortedKeys(files) {
		out = append(out, isoFile{name, files[name]})
	}
	return label, out, nil
}

func labelOr(label, fallback string) string {
	if label != "" {
		return label
	}
	return fallback
}

// isConfigVolume reports whether vol's files go to the guest on an ISO the handler writes.
func isConfigVolume(vol v1.Volume) bool {
	return vol.ConfigMap != nil || vol.Secret != nil || vol.ServiceAccount != nil || vol.DownwardAPI != nil
}
