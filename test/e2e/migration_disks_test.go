//go:build e2e

package e2e

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestMigrateCopiesLocalDisksWithTheMemory: a guest booted by its firmware from a
// containerDisk, with an emptyDisk beside it, has disks only its launcher pod holds; its
// migration is a block migration (the disks' written blocks travel with the memory) and the
// guest runs on in the target pod without a reboot.
func TestMigrateCopiesLocalDisksWithTheMemory(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	spec := testguest.DiskSpec(resource.MustParse("128Mi"), nil)
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: "scratch"})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("64Mi")}}})
	vmi := f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "disky"}, Spec: spec})
	before := f.WaitVMIPhase(vmi.Name, v1.Running, bootTimeout)
	if c := before.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != "True" {
		t.Fatalf("LiveMigratable %+v, want True", c)
	}
	migrateWithoutReboot(t, f, before, "move-disks", v1.BlockMigration)
}

// migrateWithoutReboot migrates the running instance and checks that it moved to another
// node by method and that its guest did not reboot; it returns the instance afterwards.
func migrateWithoutReboot(t *testing.T, f *framework.Framework, before *v1.VirtualMachineInstance, migration string, method v1.VirtualMachineInstanceMigrationMethod) *v1.VirtualMachineInstance {
	t.Helper()
	boot := guestBoot(t, f, before)
	after := migrate(t, f, migration, before.Name)
	if after.Status.MigrationMethod != method || after.Status.NodeName == before.Status.NodeName {
		t.Fatalf("instance on %s by %s, want moved off %s by %s", after.Status.NodeName, after.Status.MigrationMethod, before.Status.NodeName, method)
	}
	if got := guestBoot(t, f, after); got != boot {
		t.Fatalf("the guest rebooted: boot %s, was %s", got, boot)
	}
	return after
}
