package migration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/vmi"
)

// The target pod has the source's block-mode claims as devices: the running instance's
// volume status says which they are.
func TestTargetPodHasTheBlockDevices(t *testing.T) {
	instance := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "uid-1"},
		Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
			{Name: "root", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "raw"}}}}},
		Status: v1.VirtualMachineInstanceStatus{VolumeStatus: []v1.VolumeStatus{
			{Name: "root", PersistentVolumeClaimInfo: &v1.PersistentVolumeClaimInfo{ClaimName: "raw", VolumeMode: ptr.To(corev1.PersistentVolumeBlock)}}}},
	}
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "move", UID: "m-1"}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "vm"}}
	pod := RenderTargetPod(instance, m, vmi.PodConfig{LauncherImage: "launcher:1"})
	if devs := pod.Spec.Containers[0].VolumeDevices; len(devs) != 1 || devs[0].DevicePath != "/dev/vmi-disks/root" {
		t.Fatalf("target's compute devices %+v, want the block-mode claim's", devs)
	}
}
