package handler

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// cloudInitSource is what cloudInitNoCloud and cloudInitConfigDrive have in common: user data
// and network data, each as text, base64 or a Secret.
type cloudInitSource struct {
	kind                              string // the volume source's field name
	dataSource                        string // KubeVirt's name for it in a hook's CloudInitData
	userData, userDataBase64          string
	networkData, networkDataBase64    string
	userDataSecret, networkDataSecret string
	// publicKeys says whether keys propagated so go through this kind of volume.
	publicKeys func(*v1.SSHPublicKeyAccessCredentialPropagationMethod) bool
}

func noCloudSource(s *v1.CloudInitNoCloudSource) cloudInitSource {
	return cloudInitSource{kind: "cloudInitNoCloud", dataSource: "noCloud",
		userData: s.UserData, userDataBase64: s.UserDataBase64, userDataSecret: refName(s.UserDataSecretRef),
		networkData: s.NetworkData, networkDataBase64: s.NetworkDataBase64, networkDataSecret: refName(s.NetworkDataSecretRef),
		publicKeys: func(m *v1.SSHPublicKeyAccessCredentialPropagationMethod) bool { return m.NoCloud != nil },
	}
}

func configDriveSource(s *v1.CloudInitConfigDriveSource) cloudInitSource {
	return cloudInitSource{kind: "cloudInitConfigDrive", dataSource: "configDrive",
		userData: s.UserData, userDataBase64: s.UserDataBase64, userDataSecret: refName(s.UserDataSecretRef),
		networkData: s.NetworkData, networkDataBase64: s.NetworkDataBase64, networkDataSecret: refName(s.NetworkDataSecretRef),
		publicKeys: func(m *v1.SSHPublicKeyAccessCredentialPropagationMethod) bool { return m.ConfigDrive != nil },
	}
}

// CloudInitData is what a cloud-init disk holds, before it is laid out for its data source.
type CloudInitData struct {
	InstanceID, Hostname string
	// PublicKeys are authorized_keys lines by name, from accessCredentials.
	PublicKeys            map[string]string
	UserData, NetworkData []byte
	// Devices are the tagged devices, for a config drive.
	Devices []DeviceData
}

// cloudInitData resolves a cloud-init volume. The instance-id is <name>.<namespace>, as
// KubeVirt's: stable across restarts of a VM, so cloud-init's per-instance modules (host keys,
// users, user data scripts) run once per VM and not again on a persistent disk.
func cloudInitData(vmi *v1.VirtualMachineInstance, src cloudInitSource, secrets secretReader) (CloudInitData, error) {
	hostname := vmi.Spec.Hostname
	if hostname == "" {
		hostname = vmi.Name
	}
	data := CloudInitData{InstanceID: vmi.Name + "." + vmi.Namespace, Hostname: hostname}
	var err error
	if data.PublicKeys, err = publicKeys(vmi, src, secrets); err != nil {
		return data, err
	}
	data.UserData, data.NetworkData, err = src.userAndNetworkData(secrets)
	return data, err
}

// userAndNetworkData are the source's user data and network data, each from its text, base64
// or Secret.
func (src cloudInitSource) userAndNetworkData(secrets secretReader) (user, network []byte, err error) {
	if user, err = cloudInitPart(src.kind, "userData", src.userData, src.userDataBase64, src.userDataSecret, secrets, "userdata", "userData"); err != nil {
		return nil, nil, err
	}
	network, err = cloudInitPart(src.kind, "networkData", src.networkData, src.networkDataBase64, src.networkDataSecret, secrets, "networkdata", "networkData")
	return user, network, err
}

// publicKeys are the keys of every accessCredentials Secret propagated through this kind of
// cloud-init volume, one entry per line, named after the Secret and key.
func publicKeys(vmi *v1.VirtualMachineInstance, src cloudInitSource, secrets secretReader) (map[string]string, error) {
	keys := map[string]string{}
	for _, cred := range vmi.Spec.AccessCredentials {
		k := cred.SSHPublicKey
		if k == nil || k.Source.Secret == nil || !src.publicKeys(&k.PropagationMethod) {
			continue
		}
		name := k.Source.Secret.SecretName
		values, err := secrets(name)
		if err != nil {
			return nil, err
		}
		if len(values) == 0 {
			return nil, missingSecret("accessCredentials: secret %q: not found, or it has no keys", name)
		}
		for _, key := range sortedKeys(values) {
			for i, line := range strings.Split(string(values[key]), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
					keys[fmt.Sprintf("%s-%s-%d", name, key, i)] = line
				}
			}
		}
	}
	return keys, nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func refName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// cloudInitPart is the one source set of text, base64 and secret (keys tried in order).
func cloudInitPart(kind, field, text, b64, secret string, secrets secretReader, keys ...string) ([]byte, error) {
	set := 0
	for _, s := range []string{text, b64, secret} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return nil, invalidSpec("%s: set at most one of %s, %sBase64 and the %s secret", kind, field, field, field)
	}
	switch {
	case text != "":
		return []byte(text), nil
	case b64 != "":
		out, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, invalidSpec("%s: %sBase64: %v", kind, field, err)
		}
		return out, nil
	case secret != "":
		values, err := secrets(secret)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if v, ok := values[k]; ok {
				return v, nil
			}
		}
		return nil, missingSecret("%s: secret %q: not found, or it has no key %s or %s", kind, secret, keys[0], keys[1])
	}
	return nil, nil
}

// errMissingSecret marks data a Secret should hold but does not: the launcher pod mounts the
// Secret optionally (a required one would hold the pod in ContainerCreating, where nobody
// says why), so the instance fails with this reason, and a VM's next instance gets the data
// once the Secret exists.
var errMissingSecret = errors.New("missing secret")

func missingSecret(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMissingSecret, fmt.Sprintf(format, args...))
}

// noCloudFiles lay the data out for cloud-init's NoCloud source: YAML meta-data (cloud-init
// reads public-keys from it), user-data and network-config.
func noCloudFiles(d CloudInitData) ([]isoFile, error) {
	meta := map[string]any{"instance-id": d.InstanceID, "local-hostname": d.Hostname}
	if len(d.PublicKeys) > 0 {
		meta["public-keys"] = d.PublicKeys
	}
	metaData, err := yaml.Marshal(meta)
	if err != nil {
		return nil, err
	}
	files := []isoFile{{"meta-data", metaData}, {"user-data", d.UserData}}
	if d.NetworkData != nil {
		files = append(files, isoFile{"network-config", d.NetworkData})
	}
	return files, nil
}

// configDriveFiles lay the data out as OpenStack's config drive, which cloud-init and
// cloudbase-init read: openstack/latest/meta_data.json (cloud-init takes the instance-id from
// uuid), user_data and network_data.json.
func configDriveFiles(d CloudInitData) ([]isoFile, error) {
	meta := map[string]any{"instance_id": d.InstanceID, "uuid": d.InstanceID, "hostname": d.Hostname, "local_hostname": d.Hostname}
	if len(d.PublicKeys) > 0 {
		meta["public_keys"] = d.PublicKeys
	}
	if len(d.Devices) > 0 {
		meta["devices"] = d.Devices
	}
	metaData, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	files := []isoFile{{"openstack/latest/meta_data.json", metaData}}
	if d.UserData != nil {
		files = append(files, isoFile{"openstack/latest/user_data", d.UserData})
	}
	if d.NetworkData != nil {
		files = append(files, isoFile{"openstack/latest/network_data.json", d.NetworkData})
	}
	return files, nil
}
