//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdomanski/iso9660"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestHostDisksAreTheNodesFiles: with KubeVirt's HostDisk feature gate (the local cluster's
// virt-api has it), a hostDisk of type Disk gives the guest an image the node already has,
// and one of type DiskOrCreate an image the node makes (sparse, of its capacity, owned by the
// launcher's user) in a directory it makes; both stay on the node when the instance is gone.
// A namespace whose Pod Security forbids hostPath volumes gets no launcher pod, and the
// instance says why. The local cluster's nodes share the host's /tmp, so the test sees what
// every node sees.
func TestHostDisksAreTheNodesFiles(t *testing.T) {
	f := framework.New(t)
	dir := hostDiskDir(t, f)
	seed := filepath.Join(dir, "images", "seed.iso")
	writeSeedISO(t, seed, "SEED", "hello.txt", "from the node\n")
	made := filepath.Join(dir, "made", "scratch.img") // neither it nor its directory exists

	spec := framework.TestGuestSpec("hostdisk")
	addHostDisk(&spec, "seed", v1.HostDisk{Path: seed, Type: v1.HostDiskExists})
	addHostDisk(&spec, "scratch", v1.HostDisk{Path: made, Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("48Mi")})
	refused := f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "refused"}, Spec: spec})
	f.Eventually(time.Minute, "the instance to say Pod Security refused its pod", func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, refused.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized)
		if c == nil || c.Status != "False" || c.Reason != "FailedCreate" || !strings.Contains(c.Message, `restricted volume type "hostPath"`) {
			return false, fmt.Errorf("Synchronized %+v", c)
		}
		return true, nil
	})
	if _, err := os.Stat(made); err == nil {
		t.Fatalf("%s exists without a launcher pod", made)
	}
	if err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Delete(f.Context(), refused.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	allowHostPath(f)
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "hostdisk"}, Spec: spec})
	vmi := f.WaitVMIPhase("hostdisk", v1.Running, bootTimeout)

	if listed := guestCGI(t, f, vmi, "isofiles"); lineWith(listed, "hello.txt=from the node") == "" || lineWith(listed, "label=SEED") == "" {
		t.Errorf("the guest does not read the node's seed image:\n%s", listed)
	}
	if listed := guestCGI(t, f, vmi, "disks"); lineWith(listed, " size=98304 ") == "" { // 48Mi in sectors
		t.Errorf("the guest has no disk of 48Mi:\n%s", listed)
	}
	checkImage(t, made, 48<<20)
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != "False" || c.Reason != v1.VirtualMachineInstanceReasonDisksNotMigratable {
		t.Errorf("LiveMigratable %+v, want False for hostDisks not marked shared", c)
	}

	if err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Delete(f.Context(), vmi.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually(2*time.Minute, "the instance to be gone", func(ctx context.Context) (bool, error) {
		_, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("still there: %v", err)
	})
	checkImage(t, made, 48<<20)
	if _, err := os.Stat(seed); err != nil {
		t.Errorf("the seed image after the instance: %v", err)
	}
}

// TestASharedHostDiskMigratesWithoutCopying: a hostDisk marked shared is on storage every
// node sees (here the host's /tmp), so the instance is live-migratable and its migration
// moves the memory only: the target node opens the same image.
func TestASharedHostDiskMigratesWithoutCopying(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	allowHostPath(f)
	image := filepath.Join(hostDiskDir(t, f), "shared", "disk.img")
	spec := framework.TestGuestSpec("shared-hostdisk")
	addHostDisk(&spec, "data", v1.HostDisk{Path: image, Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("40Mi"), Shared: ptr.To(true)})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "shared-hostdisk"}, Spec: spec})
	before := f.WaitVMIPhase("shared-hostdisk", v1.Running, bootTimeout)
	if c := before.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != "True" {
		t.Fatalf("LiveMigratable %+v, want True", c)
	}
	after := migrateWithoutReboot(t, f, before, "move-shared", v1.LiveMigration)
	if listed := guestCGI(t, f, after, "disks"); lineWith(listed, " size=81920 ") == "" { // 40Mi in sectors
		t.Errorf("after the migration the guest has no disk of 40Mi:\n%s", listed)
	}
}

// allowHostPath lets the test's namespace run pods with hostPath volumes (Pod Security's
// privileged level), as a hostDisk's launcher pod has.
func allowHostPath(f *framework.Framework) {
	f.Kubectl("label", "namespace", f.Namespace, framework.RestrictedLabel+"=privileged", "--overwrite")
}

// hostDiskDir is a directory of the test's on the node, removed after it.
func hostDiskDir(t *testing.T, f *framework.Framework) string {
	dir := filepath.Join(os.TempDir(), "vmctl-e2e-hostdisk", f.Namespace)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// addHostDisk gives the guest a virtio disk (its kernel has no SATA driver) of the hostDisk.
func addHostDisk(spec *v1.VirtualMachineInstanceSpec, name string, hd v1.HostDisk) {
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostDisk: &hd}})
}

// writeSeedISO puts an ISO 9660 image holding one file at path, as a user would leave an
// image on the node.
func writeSeedISO(t *testing.T, path, label, name, content string) {
	t.Helper()
	iw, err := iso9660.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = iw.Cleanup() }()
	if err := iw.AddFile(bytes.NewReader([]byte(content)), name); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := iw.WriteTo(out, label); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkImage: the image is on the node, of size bytes, and the launcher's user's.
func checkImage(t *testing.T, path string, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the image on the node: %v", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Size() != size || st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID {
		t.Errorf("%s: %d bytes owned by %d:%d, want %d bytes owned by %d:%d", path, fi.Size(), st.Uid, st.Gid, size, layout.LauncherUID, layout.LauncherGID)
	}
}
