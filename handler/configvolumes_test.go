package handler

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func sysprepVolume(name string, src *v1.SysprepSource) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Sysprep: src}}
}

func TestConfigVolumesBecomeISOs(t *testing.T) {
	configs := map[string]map[string][]byte{
		"app":     {"app.conf": []byte("port=80\n"), "motd": []byte("hi\n")},
		"empty":   {},
		"labels":  {"labels": []byte(`app="x"`)},
		"answers": {"Autounattend.xml": []byte("<unattend/>")},
	}
	read := func(vol v1.Volume) (map[string][]byte, error) { return configs[vol.Name], nil }
	tests := []struct {
		name      string
		vol       v1.Volume
		wantLabel string
		wantFiles map[string]string
		wantErr   error // or a spec error (the instance fails) when invalid
		invalid   bool
	}{
		{"configMap with a label", v1.Volume{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app", VolumeLabel: "OEMDRV"}}},
			"OEMDRV", map[string]string{"app.conf": "port=80\n", "motd": "hi\n"}, nil, false},
		{"downwardAPI labelled by name", v1.Volume{Name: "labels", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
			"labels", map[string]string{"labels": `app="x"`}, nil, false},
		{"missing configMap", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "gone"}}},
			"", nil, errMissingConfigMap, false},
		{"missing secret", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "gone"}}},
			"", nil, errMissingSecret, false},
		{"optional missing secret", v1.Volume{Name: "empty", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "gone", Optional: ptr.To(true)}}},
			"empty", map[string]string{}, nil, false},
		{"sysprep from a configMap", sysprepVolume("answers", &v1.SysprepSource{ConfigMap: &corev1.LocalObjectReference{Name: "win"}}),
			SysprepLabel, map[string]string{"autounattend.xml": "<unattend/>"}, nil, false}, // the ISO's names are lowercase
		{"sysprep from a missing secret", sysprepVolume("empty", &v1.SysprepSource{Secret: &corev1.LocalObjectReference{Name: "gone"}}),
			"", nil, errMissingSecret, false},
		{"sysprep without an answer file", sysprepVolume("app", &v1.SysprepSource{ConfigMap: &corev1.LocalObjectReference{Name: "app"}}),
			"", nil, nil, true},
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
			err = writeFiles(vmi, root, nil, read, nil, nil)
			if tt.invalid {
				if !isSpecError(err) {
					t.Fatalf("err = %v, want a spec error", err)
				}
				return
			}
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
					t.Errorf("%s = %q, want %q (files %v)", name, files[name], content, files)
				}
			}
		})
	}
}

// A secret volume spec.domain.firmware.acpi names must hold its table, header included.
func TestACPITablesMustBeInTheirSecret(t *testing.T) {
	vol := v1.Volume{Name: "license", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "keys"}}}
	vmi := &v1.VirtualMachineInstance{}
	vmi.Spec.Volumes = []v1.Volume{vol}
	vmi.Spec.Domain.Firmware = &v1.Firmware{ACPI: &v1.ACPI{MsdmNameRef: "license"}}
	table := bytes.Repeat([]byte{'M'}, acpiHeaderSize)
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"the table", map[string][]byte{"msdm.bin": table}, ""},
		{"another key only", map[string][]byte{"slic.bin": table}, `secret "keys" (volume "license") has no key msdm.bin`},
		{"shorter than a header", map[string][]byte{"msdm.bin": table[:10]}, "at least 36 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := acpiTablesIn(vmi, vol, tc.files)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !isSpecError(err) || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
