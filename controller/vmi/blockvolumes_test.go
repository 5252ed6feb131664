package vmi

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A block-mode claim is a device of the compute container, not a mount; a claim with a file
// system is mounted as before. The lister says which is which for the instance's pod, the
// volume status for a migration's target.
func TestBlockModeClaimsAreDevices(t *testing.T) {
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, mode := range map[string]corev1.PersistentVolumeMode{"raw": corev1.PersistentVolumeBlock, "files": corev1.PersistentVolumeFilesystem} {
		_ = claims.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(mode)}})
	}
	_ = claims.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unsaid"}}) // Filesystem by default
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}, Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "raw"}}},
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "files"}}},
		{Name: "old", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "unsaid"}}},
	}}}
	block, err := BlockVolumes(vmi, corelisters.NewPersistentVolumeClaimLister(claims))
	if want := map[string]bool{"root": true}; err != nil || !maps.Equal(block, want) {
		t.Fatalf("BlockVolumes = %v, %v; want %v", block, err, want)
	}
	vmi.Status.VolumeStatus = []v1.VolumeStatus{
		{Name: "root", PersistentVolumeClaimInfo: &v1.PersistentVolumeClaimInfo{ClaimName: "raw", VolumeMode: ptr.To(corev1.PersistentVolumeBlock)}},
		{Name: "data", PersistentVolumeClaimInfo: &v1.PersistentVolumeClaimInfo{ClaimName: "files", VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)}},
	}
	if got := BlockVolumesInStatus(vmi); !maps.Equal(got, block) {
		t.Fatalf("BlockVolumesInStatus = %v, want %v", got, block)
	}

	compute := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1", BlockVolumes: block}).Spec.Containers[0]
	if want := []corev1.VolumeDevice{{Name: "pvc-root", DevicePath: "/dev/vmi-disks/root"}}; len(compute.VolumeDevices) != 1 || compute.VolumeDevices[0] != want[0] {
		t.Errorf("compute's devices %+v, want %+v", compute.VolumeDevices, want)
	}
	mounted := map[string]bool{}
	for _, m := range compute.VolumeMounts {
		mounted[m.Name] = true
	}
	if mounted["pvc-root"] || !mounted["pvc-data"] || !mounted["pvc-old"] {
		t.Errorf("compute mounts %v, want pvc-data and pvc-old, and not the block-mode pvc-root", mounted)
	}
}
