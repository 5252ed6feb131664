package handler

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// configReader returns the files of an instance's configMap, secret, serviceAccount,
// downwardAPI or sysprep volume, as the kubelet wrote them into the launcher pod's volume.
type configReader func(vol v1.Volume) (map[string][]byte, error)

// kubeletPlugin is the kubelet's directory name for the pod volume of a config volume
// (controller/vmi/configvolumes.go), "" for any other volume.
func kubeletPlugin(vol v1.Volume) string {
	switch {
	case vol.ConfigMap != nil, vol.Sysprep != nil && vol.Sysprep.ConfigMap != nil:
		return "kubernetes.io~configmap"
	case vol.Secret != nil, vol.Sysprep != nil && vol.Sysprep.Secret != nil:
		return "kubernetes.io~secret"
	case vol.DownwardAPI != nil:
		return "kubernetes.io~downward-api"
	case vol.ServiceAccount != nil:
		return "kubernetes.io~projected"
	}
	return ""
}

// acpiHeaderSize is an ACPI table's header, the least QEMU takes as a table.
const acpiHeaderSize = 36

// acpiTablesIn: a secret volume spec.domain.firmware.acpi names must hold its table, or QEMU
// would fail to start saying only that a file is missing.
func acpiTablesIn(vmi *v1.VirtualMachineInstance, vol v1.Volume, files map[string][]byte) error {
	for _, t := range v1.ACPITables(&vmi.Spec) {
		if t.Volume == vol.Name && vol.Secret != nil && len(files[t.Key]) < acpiHeaderSize {
			return invalidSpec("spec.domain.firmware.acpi.%s: secret %q (volume %q) has no key %s of at least %d bytes: the %s table, its header included",
				t.Field, vol.Secret.SecretName, vol.Name, t.Key, acpiHeaderSize, t.Signature)
		}
	}
	return nil
}

// podConfigVolumes reads config volumes through the kubelet's pods directory, like podSecrets.
func podConfigVolumes(kubeletRoot string, pod *corev1.Pod) configReader {
	return func(vol v1.Volume) (map[string][]byte, error) {
		plugin := kubeletPlugin(vol)
		if plugin == "" {
			return nil, invalidSpec("volume %q is not a config volume", vol.Name)
		}
		return readSecretVolume(podVolumeDir(kubeletRoot, pod.UID, plugin, layout.ConfigVolume(vol.Name)))
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
	case vol.Sysprep != nil:
		if err := sysprepFiles(vol, files); err != nil {
			return "", nil, err
		}
		label = SysprepLabel
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
func isConfigVolume(vol v1.Volume) bool { return kubeletPlugin(vol) != "" }

// SysprepLabel is a sysprep volume's ISO label, KubeVirt's: Windows Setup looks for its answer
// file on every drive, whatever the label.
const SysprepLabel = "unattendCD"

// sysprepFiles checks a sysprep volume's files: its ConfigMap or Secret must exist and hold
// an answer file, autounattend.xml (Windows Setup) or unattend.xml (after sysprep), in any
// case, or Windows would boot with nothing to act on.
func sysprepFiles(vol v1.Volume, files map[string][]byte) error {
	kind, name := "configmap", ""
	if ref := vol.Sysprep.ConfigMap; ref != nil {
		name = ref.Name
	} else if ref := vol.Sysprep.Secret; ref != nil {
		kind, name = "secret", ref.Name
	}
	if len(files) == 0 {
		missing := errMissingConfigMap
		if kind == "secret" {
			missing = errMissingSecret
		}
		return fmt.Errorf("%w: volume %q: sysprep %s %q does not exist or has no keys", missing, vol.Name, kind, name)
	}
	for file := range files {
		if f := strings.ToLower(file); f == "autounattend.xml" || f == "unattend.xml" {
			return nil
		}
	}
	return invalidSpec("volume %q: sysprep %s %q holds neither autounattend.xml nor unattend.xml", vol.Name, kind, name)
}
