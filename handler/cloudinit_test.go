package handler

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdomanski/iso9660"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// readISO returns the label and the files of an ISO image, by path.
func readISO(t *testing.T, image []byte) (string, map[string]string) {
	t.Helper()
	img, err := iso9660.OpenImage(bytes.NewReader(image))
	if err != nil {
		t.Fatal(err)
	}
	label, err := img.Label()
	if err != nil {
		t.Fatal(err)
	}
	rootDir, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var walk func(dir *iso9660.File, prefix string)
	walk = func(dir *iso9660.File, prefix string) {
		children, err := dir.GetChildren()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range children {
			if c.IsDir() {
				walk(c, prefix+c.Name()+"/")
				continue
			}
			data, err := io.ReadAll(c.Reader())
			if err != nil {
				t.Fatal(err)
			}
			files[prefix+c.Name()] = string(data)
		}
	}
	walk(rootDir, "")
	return label, files
}

// keySecrets is a pod with one SSH key Secret of two keys.
func keySecrets(name string) (map[string][]byte, error) {
	if name != "keys" {
		return nil, nil
	}
	return map[string][]byte{"alice": []byte("ssh-ed25519 AAAA alice\n# comment\n"), "bob": []byte("ssh-rsa BBBB bob")}, nil
}

func TestCloudInitISOs(t *testing.T) {
	keys := []v1.AccessCredential{{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
		Source:            v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "keys"}},
		PropagationMethod: v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}},
	}}}
	for _, tc := range []struct {
		name      string
		hostname  string
		creds     []v1.AccessCredential
		src       cloudInitSource
		devices   []DeviceData
		files     func(CloudInitData) ([]isoFile, error)
		wantLabel string
		want      map[string]string
	}{
		{
			name:  "noCloud user data only",
			src:   noCloudSource(&v1.CloudInitNoCloudSource{UserData: "#cloud-config\npassword: x\n"}),
			files: noCloudFiles, wantLabel: "cidata",
			want: map[string]string{
				"user-data": "#cloud-config\npassword: x\n",
				"meta-data": "instance-id: web.ns\nlocal-hostname: web\n",
			},
		},
		{
			name: "noCloud base64 user data, network config, hostname and keys", hostname: "guest1", creds: keys,
			src: noCloudSource(&v1.CloudInitNoCloudSource{
				UserDataBase64: base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho hi\n")),
				NetworkData:    "version: 2\n",
			}),
			files: noCloudFiles, wantLabel: "cidata",
			want: map[string]string{
				"user-data":      "#!/bin/sh\necho hi\n",
				"meta-data":      "instance-id: web.ns\nlocal-hostname: guest1\npublic-keys:\n  keys-alice-0: ssh-ed25519 AAAA alice\n  keys-bob-0: ssh-rsa BBBB bob\n",
				"network-config": "version: 2\n",
			},
		},
		{
			name: "configDrive ignores keys propagated through noCloud", creds: keys,
			src:   configDriveSource(&v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n", NetworkData: `{"links":[]}`}),
			files: configDriveFiles, wantLabel: "config-2",
			want: map[string]string{
				"openstack/latest/meta_data.json":    `{"hostname":"web","instance_id":"web.ns","local_hostname":"web","uuid":"web.ns"}`,
				"openstack/latest/user_data":         "#cloud-config\n",
				"openstack/latest/network_data.json": `{"links":[]}`,
			},
		},
		{
			name:    "configDrive with tagged devices",
			src:     configDriveSource(&v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}),
			devices: []DeviceData{{Type: deviceNIC, Bus: "pci", Address: "0000:01:00.0", MAC: "02:00:00:00:00:01", Tags: []string{"front"}}},
			files:   configDriveFiles, wantLabel: "config-2",
			want: map[string]string{
				"openstack/latest/meta_data.json": `{"devices":[{"type":"nic","bus":"pci","address":"0000:01:00.0","mac":"02:00:00:00:00:01","tags":["front"]}],` +
					`"hostname":"web","instance_id":"web.ns","local_hostname":"web","uuid":"web.ns"}`,
				"openstack/latest/user_data": "#cloud-config\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Spec.Hostname, vmi.Spec.AccessCredentials = tc.hostname, tc.creds
			data, err := cloudInitData(vmi, tc.src, keySecrets)
			if err != nil {
				t.Fatal(err)
			}
			data.Devices = tc.devices
			files, err := tc.files(data)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeISO(&buf, tc.wantLabel, files); err != nil {
				t.Fatal(err)
			}
			label, got := readISO(t, buf.Bytes())
			if label != tc.wantLabel {
				t.Errorf("label = %q, want %s", label, tc.wantLabel)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCloudInitDataErrors(t *testing.T) {
	secretRef := &corev1.LocalObjectReference{Name: "s"}
	for _, tc := range []struct {
		name    string
		src     v1.CloudInitNoCloudSource
		missing bool // waits for the secret rather than failing the instance
	}{
		{name: "two sources", src: v1.CloudInitNoCloudSource{UserData: "a", UserDataBase64: "YQ=="}},
		{name: "bad base64", src: v1.CloudInitNoCloudSource{UserDataBase64: "!!"}},
		{name: "secret the pod does not mount", src: v1.CloudInitNoCloudSource{UserDataSecretRef: secretRef}},
		{name: "secret missing or without the key", src: v1.CloudInitNoCloudSource{NetworkDataSecretRef: secretRef}, missing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(newInstance())
			if tc.missing {
				pod.Spec.Volumes = []corev1.Volume{{Name: "secret-1", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
			}
			_, err := cloudInitData(newInstance(), noCloudSource(&tc.src), podSecrets(t.TempDir(), pod))
			if tc.missing && (!errors.Is(err, errMissingSecret) || isSpecError(err)) || !tc.missing && !isSpecError(err) {
				t.Errorf("err = %v, want missing secret: %v", err, tc.missing)
			}
		})
	}
}

func TestCloudInitFromPodSecretVolume(t *testing.T) {
	kubelet := t.TempDir()
	pod := newPod(newInstance())
	pod.Spec.Volumes = []corev1.Volume{{Name: "cloudinit-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-userdata"}}}}
	// The kubelet's atomic writer: keys are symlinks into a timestamped directory.
	dir := secretVolumeDir(kubelet, pod.UID, "cloudinit-secret")
	mustWrite(t, filepath.Join(dir, "..2025_01_01", "userdata"), "#cloud-config\nfrom: secret\n")
	if err := os.Symlink("..2025_01_01", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/userdata", filepath.Join(dir, "userdata")); err != nil {
		t.Fatal(err)
	}
	src := v1.CloudInitConfigDriveSource{UserDataSecretRef: &corev1.LocalObjectReference{Name: "my-userdata"}}
	data, err := cloudInitData(newInstance(), configDriveSource(&src), podSecrets(kubelet, pod))
	if err != nil {
		t.Fatal(err)
	}
	if string(data.UserData) != "#cloud-config\nfrom: secret\n" || data.NetworkData != nil {
		t.Errorf("data = %q, %q", data.UserData, data.NetworkData)
	}
}
