package manager

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLauncherImageFromPod(t *testing.T) {
	pod := func(inits ...corev1.Container) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kubevirt", Name: "virt-controller-1"},
			Spec:       corev1.PodSpec{InitContainers: inits, Containers: []corev1.Container{{Name: "virt-controller", Image: "vmctl/virt-controller:devel"}}},
		}
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		want    string
		wantErr bool
	}{
		{"image set by kustomize", pod(corev1.Container{Name: LauncherImageContainer, Image: "internal/launcher@sha256:abc"}), "internal/launcher@sha256:abc", false},
		{"other init containers only", pod(corev1.Container{Name: "setup", Image: "x"}), "", true},
		{"no such pod", nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset()
			if tc.pod != nil {
				kube = fake.NewClientset(tc.pod)
			}
			got, err := LauncherImageFromPod(context.Background(), kube, "kubevirt", "virt-controller-1")
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestSiblingImage(t *testing.T) {
	for launcher, want := range map[string]string{
		"vmctl/virt-launcher:devel":    "vmctl/sidecar-shim:devel",
		"mirror/kv/virt-launcher:v1.2": "mirror/kv/sidecar-shim:v1.2",
		"internal/launcher@sha256:abc": "internal/sidecar-shim",
		"virt-launcher":                "sidecar-shim",
	} {
		if got := SiblingImage(launcher, "sidecar-shim"); got != want {
			t.Errorf("SiblingImage(%q, sidecar-shim) = %q, want %q", launcher, got, want)
		}
	}
}
