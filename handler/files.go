package handler

import (
	"errors"
	"fmt"
	"os"
	"path"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// sectorSize is what emptyDisk sizes are rounded up to: QEMU's raw driver wants whole sectors.
const sectorSize = 512

// writeFiles writes the disk files the handler owns into the pod's private directory (root):
// each cloudInitNoCloud volume's ISO and each emptyDisk's sparse image. Files already there are
// kept, so a retried or restarted sync never wipes a guest's data. secrets reads the pod's
// secret volumes for cloud-init data kept in secrets.
func writeFiles(vmi *v1.VirtualMachineInstance, root *os.Root, secrets secretReader) error {
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case vol.CloudInitNoCloud != nil:
			data, err := noCloudData(vmi, vol.CloudInitNoCloud, secrets)
			if err != nil {
				return err
			}
			if err := ensureNoCloudISO(root, diskRel(vol.Name, layout.NoCloudISOFile), data); err != nil {
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
// under its pods directory: the handler needs no access to secrets in the API.
func podSecrets(kubeletRoot string, pod *corev1.Pod) secretReader {
	return func(name string) (map[string][]byte, error) {
		for _, vol := range pod.Spec.Volumes {
			if vol.Secret == nil || vol.Secret.SecretName != name {
				continue
			}
			root, err := os.OpenRoot(secretVolumeDir(kubeletRoot, pod.UID, vol.Name))
			if err != nil {
				return nil, err
			}
			defer root.Close()
			out := map[string][]byte{}
			for _, key := range []string{"userdata", "userData", "networkdata", "networkData"} {
				data, err := root.ReadFile(key)
				if err == nil {
					out[key] = data
				} else if !os.IsNotExist(err) {
					return nil, err
				}
			}
			return out, nil
		}
		return nil, invalidSpec("secret %q: the launcher pod mounts no volume of it", name)
	}
}
