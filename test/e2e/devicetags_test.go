//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestConfigDriveNamesTaggedDevices: an interface and a disk with a `tag` appear in the
// config drive's openstack/latest/meta_data.json, as KubeVirt writes it, at the PCI address
// the guest finds them at (the guest lists its virtio devices at /cgi-bin/pci). A live
// migration's target pod writes the same drive.
func TestConfigDriveNamesTaggedDevices(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	spec := framework.TestGuestSpec("tagged")
	spec.Domain.Devices.Interfaces[0].Tag = "frontend"
	virtio := v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}
	spec.Domain.Devices.Disks = []v1.Disk{
		{Name: "scratch", Tag: "scratch-space", DiskDevice: virtio},
		{Name: "cloudinit", DiskDevice: virtio},
	}
	spec.Volumes = []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}},
		{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitConfigDrive: &v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}}},
	}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "tagged"}, Spec: spec})
	vmi := f.WaitVMIPhase("tagged", v1.Running, 3*time.Minute)

	files := guestCGI(t, f, vmi, "isofiles")
	line := lineWith(files, " openstack/latest/meta_data.json=")
	driveDev, _, _ := strings.Cut(line, " ")
	_, raw, found := strings.Cut(line, "=")
	var meta struct {
		Devices []struct {
			Type, Bus, Address, MAC string
			Tags                    []string
		}
	}
	if !found || json.Unmarshal([]byte(raw), &meta) != nil {
		t.Fatalf("the guest has no config drive with a meta_data.json:\n%s", files)
	}
	if len(meta.Devices) != 2 {
		t.Fatalf("meta_data.json lists %d devices, want the tagged NIC and disk: %s", len(meta.Devices), raw)
	}
	seen := guestCGI(t, f, vmi, "pci")
	for _, d := range meta.Devices {
		// What the guest shows at the address: its NIC with the MAC, or a disk other than
		// the config drive itself.
		var tag string
		var atAddress bool
		at := lineWith(seen, d.Address+" ")
		switch d.Type {
		case "nic":
			tag, atAddress = "frontend", at == d.Address+" net=eth0 mac="+strings.ToLower(d.MAC)
		case "disk":
			tag, atAddress = "scratch-space", strings.HasPrefix(at, d.Address+" block=") && at != d.Address+" block="+driveDev
		}
		if d.Bus != "pci" || len(d.Tags) != 1 || d.Tags[0] != tag || !atAddress {
			t.Errorf("device %+v: want bus pci, tag %q, and the guest's device at its address; the guest sees:\n%s", d, tag, seen)
		}
	}

	source := configDriveSum(f, vmi)
	if target := configDriveSum(f, migrate(t, f, "move-tagged", vmi.Name)); target != source {
		t.Errorf("the target pod's config drive differs from the source's: sha256 %s, was %s", target, source)
	}
}

// configDriveSum is the SHA-256 of the instance's config drive (volume "cloudinit") in its
// launcher pod on the node it runs on.
func configDriveSum(f *framework.Framework, vmi *v1.VirtualMachineInstance) string {
	var pod string
	f.Eventually(time.Minute, "the launcher pod on "+vmi.Status.NodeName, func(ctx context.Context) (bool, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		for _, p := range pods.Items {
			if p.Spec.NodeName == vmi.Status.NodeName && p.Status.Phase == corev1.PodRunning {
				pod = p.Name
			}
		}
		return pod != "", err
	})
	iso := layout.InPod(path.Join(layout.DiskRel("cloudinit"), layout.ConfigDriveISOFile))
	sum, _, _ := strings.Cut(f.Kubectl("exec", pod, "-c", "compute", "--", "sha256sum", iso), " ")
	return sum
}
