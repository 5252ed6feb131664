package handler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// sectorSize is what emptyDisk sizes are rounded up to: QEMU's raw driver wants whole sectors.
const sectorSize = 512

// writeFiles writes the disk files the handler owns into the pod's private directory (root):
// each cloudInitNoCloud volume's ISO and each emptyDisk's sparse image. Files already there are
// kept, so a retried or restarted sync never wipes a guest's data. secrets reads the pod's
// secret volumes for cloud-init data kept in secrets; devices go on a config drive; the hook
// sidecars' PreCloudInitIso may rewrite the cloud-init data (nil: none).
func writeFiles(vmi *v1.VirtualMachineInstance, root *os.Root, secrets secretReader, configs configReader, devices []DeviceData, sidecars *hookCalls) error {
	shared := vmi.Spec.SharedVolumes()
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case shared[vol.Name]:
			// A filesystem: its virtiofsd serves the files themselves, no ISO of them.
		case isConfigVolume(vol):
			files, err := configs(vol)
			if err != nil {
				return fmt.Errorf("volume %q: %w", vol.Name, err)
			}
			if err := acpiTablesIn(vmi, vol, files); err != nil {
				return err
			}
			label, iso, err := configISO(vol, files)
			if err != nil {
				return err
			}
			if err := ensureISO(root, diskRel(vol.Name, layout.ConfigISOFile), label, iso); err != nil {
				return fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.CloudInitNoCloud != nil:
			if err := writeCloudInit(vmi, root, secrets, sidecars, vol.Name, noCloudSource(vol.CloudInitNoCloud), nil, noCloudFiles,
				diskRel(vol.Name, layout.NoCloudISOFile), NoCloudLabel); err != nil {
				return fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.CloudInitConfigDrive != nil:
			if err := writeCloudInit(vmi, root, secrets, sidecars, vol.Name, configDriveSource(vol.CloudInitConfigDrive), devices, configDriveFiles,
				diskRel(vol.Name, layout.ConfigDriveISOFile), ConfigDriveLabel); err != nil {
				return fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.EmptyDisk != nil:
			size := vol.EmptyDisk.Capacity.Value()
			if size <= 0 {
				return invalidSpec("spec.volumes: emptyDisk %q: capacity must be positive", vol.Name)
			}
			if err := ensureEmptyDisk(root, diskRel(vol.Name, layout.RawDiskFile), size); err != nil {
				return fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		}
	}
	return nil
}

// writeCloudInit resolves the cloud-init volume named volume, passes it through the hook
// sidecars and writes its ISO, laid out by files.
func writeCloudInit(vmi *v1.VirtualMachineInstance, root *os.Root, secrets secretReader, sidecars *hookCalls, volume string, src cloudInitSource,
	devices []DeviceData, layoutFiles func(CloudInitData) ([]isoFile, error), rel, label string) error {
	data, err := cloudInitData(vmi, src, secrets)
	if err != nil {
		return err
	}
	data.Devices = devices
	if data, err = sidecars.preCloudInitIso(src, volume, data); err != nil {
		return err
	}
	files, err := layoutFiles(data)
	if err != nil {
		return err
	}
	return ensureISO(root, rel, label, files)
}

// ensureEmptyDisk creates a sparse raw image of at least size bytes, unless one exists.
func ensureEmptyDisk(root *os.Root, rel string, size int64) error {
	if size%sectorSize != 0 {
		size += sectorSize - size%sectorSize
	}
	return createOnce(root, rel, func(f *os.File) error { return f.Truncate(size) })
}

// createOnce creates rel with fill, unless a regular file is there already. It writes a
// temporary file and renames it, so a file that exists is complete. Everything goes through
// root, which keeps the privileged handler inside the pod's directory whatever symlinks the pod
// planted. The file belongs to the pod's user, as whom QEMU opens it.
func createOnce(root *os.Root, rel string, fill func(*os.File) error) error {
	exists, err := regularFile(root, rel)
	if err != nil || exists {
		return err
	}
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return err
	}
	tmp := rel + ".tmp"
	_ = root.Remove(tmp)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Chown(layout.LauncherUID, layout.LauncherGID), fill(f)); err != nil {
		_ = f.Close()
		_ = root.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return root.Rename(tmp, rel)
}

// secretReader returns the data of a secret the launcher pod mounts.
type secretReader func(name string) (map[string][]byte, error)

// podSecrets reads secrets through the pod's secret volumes, as the kubelet materialised them
// under its pods directory: the handler needs no access to secrets in the API. The volumes are
// optional, so a missing secret reads as one without keys.
func podSecrets(kubeletRoot string, pod *corev1.Pod) secretReader {
	return func(name string) (map[string][]byte, error) {
		for _, vol := range pod.Spec.Volumes {
			if vol.Secret == nil || vol.Secret.SecretName != name {
				continue
			}
			return readSecretVolume(secretVolumeDir(kubeletRoot, pod.UID, vol.Name))
		}
		return nil, invalidSpec("secret %q: the launcher pod mounts no volume of it", name)
	}
}

// readSecretVolume reads every key of a secret volume. The kubelet's own entries (..data and
// the timestamped directory it points to) start with "..". Reads go through an os.Root, so
// the key links, which point into ..data, cannot lead out of the volume.
func readSecretVolume(dir string) (map[string][]byte, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		data, err := root.ReadFile(e.Name())
		if err != nil {
			return nil, fmt.Errorf("secret volume key %s: %w", e.Name(), err)
		}
		out[e.Name()] = data
	}
	return out, nil
}
