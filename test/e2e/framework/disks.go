package framework

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/containerdisk"
)

// DiskPVC makes a claim whose disk.img is the raw form of the disk in a containerDisk image
// tarball of _out/images (target: its name there, e.g. "debian-guest"): what a user gets by
// importing a cloud image into a PVC (CDI does it in KubeVirt).
func (f *Framework) DiskPVC(name, target string) *corev1.PersistentVolumeClaim {
	f.t.Helper()
	root, err := apiserver.RepoRoot()
	if err != nil {
		f.t.Fatal(err)
	}
	dir := f.pvDir(name)
	qcow2 := filepath.Join(dir, "image.qcow2")
	if err := extractDisk(filepath.Join(root, "_out", "images", target+".tar"), qcow2); err != nil {
		f.t.Fatal(err)
	}
	img := filepath.Join(dir, layout.PVCDiskFile)
	if out, err := exec.Command("qemu-img", "convert", "-O", "raw", qcow2, img).CombinedOutput(); err != nil {
		f.t.Fatalf("qemu-img convert: %v\n%s", err, out)
	}
	_ = os.Remove(qcow2)
	fi, err := os.Stat(img)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.boundClaim(dir, name, *resource.NewQuantity(fi.Size(), resource.BinarySI))
}

// pvDir is a directory for a volume named after the claim, removed after the test.
func (f *Framework) pvDir(claim string) string {
	f.t.Helper()
	dir := filepath.Join(os.TempDir(), "vmctl-e2e-pv", f.Namespace+"-"+claim)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// FilesClaim creates a claim of that name whose volume holds what fill writes in the
// directory it is given, as a user fills a claim before a VM uses it.
func (f *Framework) FilesClaim(name string, size resource.Quantity, fill func(dir string)) *corev1.PersistentVolumeClaim {
	f.t.Helper()
	dir := f.pvDir(name)
	fill(dir)
	return f.boundClaim(dir, name, size)
}

// boundClaim makes the claim of that name bound to a hostPath volume of dir (the local
// cluster has no provisioner), dir and its files owned by the launcher's user, as KubeVirt
// requires of volumes without ownership management.
func (f *Framework) boundClaim(dir, name string, size resource.Quantity) *corev1.PersistentVolumeClaim {
	f.t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	f.ownedByLauncher(paths...)
	pvc := f.ClaimOf(f.NewPV(name, size, corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}))
	f.CreateObjects(pvc)
	return pvc
}

// ClaimOf creates pv and returns the claim it is pre-bound to (not yet created): same name,
// size and volume mode, no storage class.
func (f *Framework) ClaimOf(pv *corev1.PersistentVolume) *corev1.PersistentVolumeClaim {
	f.t.Helper()
	f.CreatePV(pv)
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: pv.Spec.ClaimRef.Name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      pv.Spec.AccessModes,
			VolumeMode:       pv.Spec.VolumeMode,
			StorageClassName: new(string),
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: pv.Spec.Capacity},
		},
	}
}

// ownedByLauncher gives the files to the launcher's user, as whom QEMU opens them.
func (f *Framework) ownedByLauncher(paths ...string) {
	f.t.Helper()
	for _, p := range paths {
		if err := os.Chown(p, layout.LauncherUID, layout.LauncherGID); err != nil {
			f.t.Fatal(err)
		}
	}
}

// extractDisk writes the disk of a containerDisk image tarball to dest.
func extractDisk(imageTar, dest string) error {
	rc, _, err := containerdisk.Open(imageTar)
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.Create(dest)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// StatePV makes the volume a VM's state claim (persistent-state-for-<vm>, which
// virt-controller creates) binds to: the local cluster has no provisioner, so this stands in
// for one. It is a hostPath directory owned by the launcher's user, pre-bound to the claim,
// and its path is returned: the test can look at the state the VM left.
func (f *Framework) StatePV(vm string) string {
	f.t.Helper()
	claim := "persistent-state-for-" + vm
	dir := f.pvDir(claim)
	f.ownedByLauncher(dir)
	f.CreatePV(f.NewPV(claim, resource.MustParse("10Mi"), corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}))
	return dir
}

// NewPV is a ReadWriteOnce volume of source, pre-bound to the claim of that name in the
// test's namespace.
func (f *Framework) NewPV(claim string, size resource.Quantity, source corev1.PersistentVolumeSource) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: f.Namespace + "-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        source,
			ClaimRef:                      &corev1.ObjectReference{Namespace: f.Namespace, Name: claim},
		},
	}
}

// CreatePV creates the (cluster-scoped) volume and deletes it after the test.
func (f *Framework) CreatePV(pv *corev1.PersistentVolume) {
	f.t.Helper()
	if _, err := f.Kube.CoreV1().PersistentVolumes().Create(f.Context(), pv, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.Kube.CoreV1().PersistentVolumes().Delete(f.Context(), pv.Name, metav1.DeleteOptions{}) })
}
