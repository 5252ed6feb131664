package handler

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// kubeVirtCloudInit is KubeVirt's CloudInitData as its PreCloudInitIso hooks read and write
// it: JSON under Go's field names, since KubeVirt's struct has no tags.
type kubeVirtCloudInit struct {
	DataSource          string
	NoCloudMetaData     *noCloudMetaData
	ConfigDriveMetaData *configDriveMetaData
	UserData            string
	NetworkData         string
	DevicesData         *[]DeviceData
	VolumeName          string
}

// noCloudMetaData is NoCloud's meta-data, under cloud-init's names.
type noCloudMetaData struct {
	InstanceType  string            `json:"instance-type,omitempty"`
	InstanceID    string            `json:"instance-id"`
	LocalHostname string            `json:"local-hostname,omitempty"`
	PublicSSHKeys map[string]string `json:"public-keys,omitempty"`
}

// configDriveMetaData is a config drive's meta_data.json, under OpenStack's names.
type configDriveMetaData struct {
	InstanceType  string            `json:"instance_type,omitempty"`
	InstanceID    string            `json:"instance_id"`
	LocalHostname string            `json:"local_hostname,omitempty"`
	Hostname      string            `json:"hostname,omitempty"`
	UUID          string            `json:"uuid,omitempty"`
	Devices       *[]DeviceData     `json:"devices,omitempty"`
	PublicSSHKeys map[string]string `json:"public_keys,omitempty"`
}

// toKubeVirtCloudInit is the data of a cloud-init volume as a hook gets it.
func toKubeVirtCloudInit(src cloudInitSource, volume string, d CloudInitData) kubeVirtCloudInit {
	out := kubeVirtCloudInit{DataSource: src.dataSource, UserData: string(d.UserData), NetworkData: string(d.NetworkData), VolumeName: volume}
	if src.dataSource == "configDrive" {
		out.ConfigDriveMetaData = &configDriveMetaData{InstanceID: d.InstanceID, UUID: d.InstanceID,
			LocalHostname: d.Hostname, Hostname: d.Hostname, PublicSSHKeys: d.PublicKeys}
		if len(d.Devices) > 0 {
			out.DevicesData, out.ConfigDriveMetaData.Devices = &d.Devices, &d.Devices
		}
	} else {
		out.NoCloudMetaData = &noCloudMetaData{InstanceID: d.InstanceID, LocalHostname: d.Hostname, PublicSSHKeys: d.PublicKeys}
	}
	return out
}

// fromKubeVirtCloudInit is the data to write after a hook answered with res: its CloudInitData,
// or, from a sidecar written for KubeVirt's first PreCloudInitIso, a CloudInitNoCloudSource
// whose user and network data replace d's. What the hook left out stays as it was.
func fromKubeVirtCloudInit(src cloudInitSource, d CloudInitData, res hooks.CloudInit) (CloudInitData, error) {
	if len(res.Data) == 0 && len(res.NoCloudSource) > 0 {
		var legacy v1.CloudInitNoCloudSource
		if err := json.Unmarshal(res.NoCloudSource, &legacy); err != nil {
			return d, fmt.Errorf("cloudInitNoCloudSource: %w", err)
		}
		noSecrets := func(name string) (map[string][]byte, error) {
			return nil, fmt.Errorf("secret %q: a hook's cloud-init data cannot name secrets", name)
		}
		var err error
		d.UserData, d.NetworkData, err = noCloudSource(&legacy).userAndNetworkData(noSecrets)
		return d, err
	}
	if len(res.Data) == 0 {
		return d, errors.New("no cloud-init data in the answer")
	}
	var kv kubeVirtCloudInit
	if err := json.Unmarshal(res.Data, &kv); err != nil {
		return d, fmt.Errorf("cloud-init data: %w", err)
	}
	d.UserData, d.NetworkData = bytesOrNil(kv.UserData), bytesOrNil(kv.NetworkData)
	if m := kv.NoCloudMetaData; m != nil && src.dataSource == "noCloud" {
		d.InstanceID, d.Hostname, d.PublicKeys = cmp.Or(m.InstanceID, d.InstanceID), cmp.Or(m.LocalHostname, d.Hostname), m.PublicSSHKeys
	}
	if m := kv.ConfigDriveMetaData; m != nil && src.dataSource == "configDrive" {
		d.InstanceID, d.Hostname, d.PublicKeys = cmp.Or(m.InstanceID, d.InstanceID), cmp.Or(m.LocalHostname, d.Hostname), m.PublicSSHKeys
	}
	if kv.DevicesData != nil {
		d.Devices = *kv.DevicesData
	}
	return d, nil
}

func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
