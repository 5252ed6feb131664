package vmi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// Each hook sidecar is a native sidecar with the sockets' emptyDir; a ConfigMap script is
// mounted executable at its hook path and, without an image, runs in the sidecar-shim; a
// claim is mounted at its volumePath, and in compute at its sharedComputePath.
func TestLauncherPodRunsTheHookSidecars(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Annotations: map[string]string{hooks.SidecarsAnnotation: `[
		{"image": "smbios:1", "imagePullPolicy": "Always", "args": ["--version", "v1alpha2"]},
		{"args": ["--version", "v1alpha3"], "configMap": {"name": "scripts", "key": "my_script.sh", "hookPath": "/usr/bin/onDefineDomain"}},
		{"image": "efi:1", "pvc": {"name": "firmware", "volumePath": "/efivars", "sharedComputePath": "/var/run/efivars"}}]`}}}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1", SidecarShimImage: "shim:1"})
	got := map[string]corev1.Container{}
	for _, c := range pod.Spec.InitContainers {
		got[c.Name] = c
	}
	for name, want := range map[string]struct {
		image  string
		pull   corev1.PullPolicy
		args   []string
		mounts []corev1.VolumeMount
	}{
		"hook-sidecar-0": {"smbios:1", corev1.PullAlways, []string{"--version", "v1alpha2"}, []corev1.VolumeMount{socketsMount}},
		"hook-sidecar-1": {"shim:1", corev1.PullIfNotPresent, []string{"--version", "v1alpha3"}, []corev1.VolumeMount{socketsMount,
			{Name: "hook-sidecar-1-script", MountPath: "/usr/bin/onDefineDomain", SubPath: "my_script.sh", ReadOnly: true}}},
		"hook-sidecar-2": {"efi:1", corev1.PullIfNotPresent, nil, []corev1.VolumeMount{socketsMount, {Name: "hook-sidecar-2-claim", MountPath: "/efivars"}}},
	} {
		c, ok := got[name]
		if !ok {
			t.Fatalf("no init container %s: %v", name, pod.Spec.InitContainers)
		}
		if c.Image != want.image || c.ImagePullPolicy != want.pull || !cmp.Equal(c.Args, want.args) || ptr.Deref(c.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways {
			t.Errorf("%s: image %s, pull %s, args %v, restart %v", name, c.Image, c.ImagePullPolicy, c.Args, c.RestartPolicy)
		}
		if diff := cmp.Diff(want.mounts, c.VolumeMounts); diff != "" {
			t.Errorf("%s mounts: %s", name, diff)
		}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	if v, ok := volumes[hooks.SocketsVolume]; !ok || v.EmptyDir == nil {
		t.Errorf("sockets volume %+v, want an emptyDir", v)
	}
	script := volumes["hook-sidecar-1-script"].ConfigMap
	if script == nil || script.Name != "scripts" || ptr.Deref(script.DefaultMode, 0) != 0o755 || len(script.Items) != 1 || script.Items[0].Key != "my_script.sh" {
		t.Errorf("script volume %+v, want ConfigMap scripts' my_script.sh, mode 0755", script)
	}
	if claim := volumes["hook-sidecar-2-claim"].PersistentVolumeClaim; claim == nil || claim.ClaimName != "firmware" {
		t.Errorf("claim volume %+v, want PVC firmware", claim)
	}
	shared := false
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if m.Name == hooks.SocketsVolume {
			t.Error("compute mounts the sidecars' sockets: only virt-handler calls them")
		}
		shared = shared || m == corev1.VolumeMount{Name: "hook-sidecar-2-claim", MountPath: "/var/run/efivars"}
	}
	if !shared {
		t.Errorf("compute does not mount the sidecar's claim at its sharedComputePath: %+v", pod.Spec.Containers[0].VolumeMounts)
	}
}

func TestLauncherPodWithoutHookSidecars(t *testing.T) {
	for _, ann := range []map[string]string{nil, {hooks.SidecarsAnnotation: "not json"}} {
		pod := RenderLauncherPod(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}, PodConfig{LauncherImage: "launcher:1"})
		for _, v := range pod.Spec.Volumes {
			if v.Name == hooks.SocketsVolume {
				t.Errorf("annotations %v: a sockets volume", ann)
			}
		}
	}
}
