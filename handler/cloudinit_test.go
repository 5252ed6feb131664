package handler

import (
	"bytes"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdomanski/iso9660"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// readISO returns the label and the root files of an ISO image.
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
	children, err := rootDir.GetChildren()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, c := range children {
		data, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatal(err)
		}
		files[c.Name()] = string(data)
	}
	return label, files
}

func TestNoCloudISO(t *testing.T) {
	noSecrets := func(name string) (map[string][]byte, error) { return nil, invalidSpec("no secret %s", name) }
	for _, tc := range []struct {
		name     string
		hostname string
		src      v1.CloudInitNoCloudSource
		want     map[string]string
	}{
		{
			name: "user data only",
			src:  v1.CloudInitNoCloudSource{UserData: "#cloud-config\npassword: x\n"},
			want: map[string]string{
				"user-data": "#cloud-config\npassword: x\n",
				"meta-data": "instance-id: " + string(testVMIUID) + "\nlocal-hostname: web\n",
			},
		},
		{
			name:     "base64 user data and network config, hostname",
			hostname: "guest1",
			src: v1.CloudInitNoCloudSource{
				UserDataBase64: base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho hi\n")),
				NetworkData:    "version: 2\n",
			},
			want: map[string]string{
				"user-data":      "#!/bin/sh\necho hi\n",
				"meta-data":      "instance-id: " + string(testVMIUID) + "\nlocal-hostname: guest1\n",
				"network-config": "version: 2\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Spec.Hostname = tc.hostname
			data, err := noCloudData(vmi, &tc.src, noSecrets)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeNoCloudISO(&buf, data); err != nil {
				t.Fatal(err)
			}
			label, files := readISO(t, buf.Bytes())
			if label != "cidata" {
				t.Errorf("label = %q, want cidata", label)
			}
			if diff := cmp.Diff(tc.want, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoCloudDataErrors(t *testing.T) {
	for name, src := range map[string]v1.CloudInitNoCloudSource{
		"two sources": {UserData: "a", UserDataBase64: "YQ=="},
		"bad base64":  {UserDataBase64: "!!"},
		"no secret":   {UserDataSecretRef: &corev1.LocalObjectReference{Name: "s"}},
	} {
		_, err := noCloudData(newInstance(), &src, podSecrets(t.TempDir(), newPod(newInstance())))
		if !isSpecError(err) {
			t.Errorf("%s: err = %v, want a spec error", name, err)
		}
	}
}

func TestNoCloudFromPodSecretVolume(t *testing.T) {
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
	src := v1.CloudInitNoCloudSource{UserDataSecretRef: &corev1.LocalObjectReference{Name: "my-userdata"}}
	data, err := noCloudData(newInstance(), &src, podSecrets(kubelet, pod))
	if err != nil {
		t.Fatal(err)
	}
	if string(data.UserData) != "#cloud-config\nfrom: secret\n" || data.NetworkData != nil {
		t.Errorf("data = %q, %q", data.UserData, data.NetworkData)
	}
}
