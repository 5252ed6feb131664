//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestABlockModeClaimIsTheGuestsDisk: a claim in volumeMode Block (KubeVirt's
// vmi-block-pvc.yaml) reaches the guest as the device itself: the launcher pod gets it as a
// volumeDevice, which the kubelet would refuse to mount, and the guest reads what the
// device holds. The device is a loop device of this machine behind a local volume on the
// first node, as a cluster's block storage would be.
func TestABlockModeClaimIsTheGuestsDisk(t *testing.T) {
	f := framework.New(t)
	node := f.RealNodes(1)[0].Name
	image := filepath.Join(t.TempDir(), "block.iso")
	writeSeedISO(t, image, "BLOCKDISK", "hello.txt", "from the device\n")
	if err := os.Truncate(image, 8<<20); err != nil { // 8 MiB: 16384 sectors
		t.Fatal(err)
	}
	dev := loopDevice(t, image)
	f.CreateObjects(blockClaim(f, "raw", dev, node))

	spec := framework.TestGuestSpec("block")
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: "raw", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "raw", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "raw"}}})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "block"}, Spec: spec})
	vmi := f.WaitVMIPhase("block", v1.Running, bootTimeout)

	if listed := guestCGI(t, f, vmi, "isofiles"); lineWith(listed, "label=BLOCKDISK") == "" || lineWith(listed, "hello.txt=from the device") == "" {
		t.Errorf("the guest does not read the device:\n%s", listed)
	}
	if listed := guestCGI(t, f, vmi, "disks"); lineWith(listed, " size=16384 ") == "" {
		t.Errorf("the guest has no disk of 8 MiB:\n%s", listed)
	}
	compute := f.LauncherPod(vmi).Spec.Containers[0]
	if len(compute.VolumeDevices) != 1 || compute.VolumeDevices[0].DevicePath != "/dev/vmi-disks/raw" {
		t.Errorf("compute's volumeDevices %+v, want the claim at /dev/vmi-disks/raw", compute.VolumeDevices)
	}
	for _, vs := range vmi.Status.VolumeStatus {
		if vs.Name == "raw" && (vs.PersistentVolumeClaimInfo == nil || ptr.Deref(vs.PersistentVolumeClaimInfo.VolumeMode, "") != corev1.PersistentVolumeBlock) {
			t.Errorf("volumeStatus of raw %+v, want volumeMode Block", vs)
		}
	}
}

// loopDevice attaches file to a free loop device of this machine until the test ends.
func loopDevice(t *testing.T, file string) string {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", file).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v\n%s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	// Detached once its last user (the launcher's container) closes it.
	t.Cleanup(func() { _ = exec.Command("losetup", "--detach", dev).Run() })
	return dev
}

// blockClaim is a claim of that name bound to a block-mode local volume of dev on node.
func blockClaim(f *framework.Framework, name, dev, node string) *corev1.PersistentVolumeClaim {
	pv := f.NewPV(name, resource.MustParse("8Mi"), corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dev}})
	pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	return f.ClaimOf(pv)
}
