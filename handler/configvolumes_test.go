package handler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestConfigVolumesBecomeISOs(t *testing.T) {
	configs := map[string]map[string][]byte{
		"app":    {"app.conf": []byte("port=80\n"), "motd": []byte("hi\n")},
		"empty":  {},
		"labels": {"labels": []byte(`app="x"`)},
	}
	read := func(vol v1.Volume) (map[string][]byte, error) { return configs[vol.Name], nil }
	tests := []struct {
		name      string
		vol       v1.Volume
		wantLabel string
		wantFiles map[string]string
		wantErr   error
	}{
		{"configMap with a label", v1.Volume{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app", VolumeLabel: "OEMDRV"}}},
			"OEMDRV", map[string]string{"app.conf": "port=80\n", "motd": "hi\n"}, nil},
		{"downwardAPI labelled by name", v1.Volume{Name: "labels", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
			"labels", map[string]string{"labels": `app="x"`}, nil},
		{"missing configMap", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "gone"}}},
			"", nil, errMissingConfigMap},
		{"missing secret", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "gone"}}},
			"", nil, errMissingSecret},
		{"optional missing secret", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "gone", Optional: ptr.To(true)}}},
			"empty", map[string]string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			vmi := newInstance()
			vmi.Spec.Volumes = []v1.Volume{tt.vol}
			err = writeFiles(vmi, root, nil, read)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			iso, err := os.ReadFile(filepath.Join(dir, "vmi-disks", tt.vol.Name, "config.iso"))
			if err != nil {
				t.Fatal(err)
			}
			label, files := readISO(t, iso)
			if label != tt.wantLabel || len(files) != len(tt.wantFiles) {
				t.Fatalf("label %q files %v; want %q %v", label, files, tt.wantLabel, tt.wantFiles)
			}
			for name, content := range tt.wantFiles {
				if files[name] != content {
					t.Errorf("%s = %q, want %q", name, files[name], content)
				}
			}
		})
	}
}
