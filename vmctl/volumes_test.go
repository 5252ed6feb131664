package vmctl

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestCloneBindsPodVolumes(t *testing.T) {
	pvc := func(claim string, readOnly bool) v1.VolumeSource {
		return v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}
	}
	protoVolumes := []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}},
		{Name: "data", VolumeSource: pvc("placeholder", false)},
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}},
	}
	podVolumes := []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}},
		{Name: "seed", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "seed", ReadOnly: true}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
	}
	tests := []struct {
		name    string
		mapping map[string]string
		want    map[string]v1.VolumeSource // volumes of the clone that differ from the prototype's
		wantErr string
	}{
		{name: "no mapping", want: map[string]v1.VolumeSource{}},
		{name: "a StatefulSet's claim", mapping: map[string]string{"data": "data"},
			want: map[string]v1.VolumeSource{"data": pvc("data-db-0", false)}},
		{name: "any volume kind becomes the claim", mapping: map[string]string{"scratch": "data"},
			want: map[string]v1.VolumeSource{"scratch": pvc("data-db-0", false)}},
		{name: "read-only stays read-only", mapping: map[string]string{"data": "seed"},
			want: map[string]v1.VolumeSource{"data": pvc("seed", true)}},
		{name: "a generic ephemeral volume's claim", mapping: map[string]string{"data": "tmp"},
			want: map[string]v1.VolumeSource{"data": pvc("vmctl-abc-12345-tmp", false)}},
		{name: "the prototype lacks the volume", mapping: map[string]string{"disk": "data"}, wantErr: `the prototype has no volume "disk"`},
		{name: "the pod lacks the volume", mapping: map[string]string{"data": "absent"}, wantErr: `has no volume "absent"`},
		{name: "the pod's volume is no claim", mapping: map[string]string{"data": "podinfo"}, wantErr: "neither a persistentVolumeClaim nor an ephemeral volume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proto := testPrototype()
			proto.Spec.Template.Spec.Volumes = protoVolumes
			pod := testPod()
			pod.Spec.Volumes = podVolumes
			clone, err := Clone(proto, pod, "apps", tt.mapping)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrVolumeMapping) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want a volume mapping error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			changed := map[string]v1.VolumeSource{}
			for i, vol := range clone.Spec.Template.Spec.Volumes {
				if !reflect.DeepEqual(vol, protoVolumes[i]) {
					changed[vol.Name] = vol.VolumeSource
				}
			}
			if !reflect.DeepEqual(changed, tt.want) {
				t.Errorf("changed volumes = %+v, want %+v", changed, tt.want)
			}
		})
	}
}

func TestSharedVolumes(t *testing.T) {
	proto := testPrototype()
	proto.Spec.Template.Spec.Volumes = []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}},
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-pvc"}}},
		{Name: "iso", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "iso-pvc", ReadOnly: true}}},
	}
	if got, want := SharedVolumes(proto, nil), []string{"data (PVC data-pvc)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SharedVolumes = %v, want %v", got, want)
	}
	if got := SharedVolumes(proto, map[string]string{"data": "data"}); len(got) != 0 {
		t.Errorf("a volume bound to the pod's claim counts as shared: %v", got)
	}
}
