//go:build e2e

package e2e

import (
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestDisksAsTheGuestSeesThem: the instance's status says, as KubeVirt's does, which device
// each volume is in the guest, the machine type it runs and the user QEMU runs as; and a
// `solidState` disk is one the guest sees as non-rotational, the other SCSI disk as rotating.
// The guest lists its disks at /cgi-bin/disks; the disks differ in size, so each is found by
// its size whatever name the guest's kernel gave it.
func TestDisksAsTheGuestSeesThem(t *testing.T) {
	f := framework.New(t)
	spec := framework.TestGuestSpec("disks")
	disks := []struct {
		name    string
		bus     v1.DiskBus
		solid   bool
		size    string
		sectors string // what /sys/block/<dev>/size says of it
	}{
		{"data", v1.DiskBusVirtio, false, "32Mi", "65536"},
		{"ssd", v1.DiskBusSCSI, true, "64Mi", "131072"},
		{"hdd", v1.DiskBusSCSI, false, "96Mi", "196608"},
	}
	for _, d := range disks {
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: d.name,
			DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: d.bus, SolidState: d.solid}}})
		spec.Volumes = append(spec.Volumes, v1.Volume{Name: d.name,
			VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse(d.size)}}})
	}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "disks"}, Spec: spec})
	vmi := f.WaitVMIPhase("disks", v1.Running, 3*time.Minute)

	targets := map[string]string{}
	for _, vs := range vmi.Status.VolumeStatus {
		targets[vs.Name] = vs.Target
	}
	if want := map[string]string{"data": "vda", "ssd": "sda", "hdd": "sdb"}; !maps.Equal(targets, want) {
		t.Errorf("volumeStatus targets %v, want %v", targets, want)
	}
	if m := vmi.Status.Machine; m == nil || !strings.HasPrefix(m.Type, "pc-q35-") {
		t.Errorf("status.machine %+v, want the resolved q35 machine type", m)
	}
	if vmi.Status.RuntimeUser != layout.LauncherUID {
		t.Errorf("status.runtimeUser %d, want %d", vmi.Status.RuntimeUser, layout.LauncherUID)
	}

	listed := guestCGI(t, f, vmi, "disks")
	for _, d := range disks {
		line := lineWith(listed, " size="+d.sectors+" ")
		rotational := "rotational=1"
		if d.solid {
			rotational = "rotational=0"
		}
		switch {
		case line == "":
			t.Errorf("the guest has no disk of %s (%s sectors): %s", d.size, d.sectors, listed)
		case d.bus == v1.DiskBusVirtio && !strings.HasPrefix(line, targets[d.name]+" "):
			// virtio disks are named in PCI order, which is the spec's; SCSI ones as probed
			t.Errorf("virtio disk %s is %q in the guest, its status says %s", d.name, line, targets[d.name])
		case d.bus == v1.DiskBusSCSI && !strings.Contains(line, rotational):
			t.Errorf("disk %s (solidState %v) in the guest: %q, want %s", d.name, d.solid, line, rotational)
		}
	}
}

// lineWith is the first line of text that contains s, "" when none does.
func lineWith(text, s string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
