package domain

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A domain gets KubeVirt's USB controller: none, unless a device sits on the USB bus.
func TestUSBController(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*v1.Devices)
		model string
	}{
		{"no USB device", func(*v1.Devices) {}, "none"},
		{"a virtio tablet", func(d *v1.Devices) { d.Inputs = []v1.Input{{Name: "t", Type: "tablet", Bus: "virtio"}} }, "none"},
		{"a tablet on the default bus", func(d *v1.Devices) { d.Inputs = []v1.Input{{Name: "t", Type: "tablet"}} }, "qemu-xhci"},
		{"autoattachInputDevice", func(d *v1.Devices) { d.AutoattachInputDevice = ptr.To(true) }, "qemu-xhci"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			tc.edit(&vmi.Spec.Domain.Devices)
			d, err := Convert(vmi, launcherEnv(TypeQEMU, vmi))
			if err != nil {
				t.Fatal(err)
			}
			var models []string
			for _, c := range d.Devices.Controllers {
				if c.Type == "usb" {
					models = append(models, c.Model)
				}
			}
			if len(models) != 1 || models[0] != tc.model {
				t.Errorf("USB controllers %v, want one of model %q", models, tc.model)
			}
		})
	}
}

// A persistent TPM's state is never deleted by libvirt (it lives in the VM's state claim); a
// TPM without persistence keeps libvirt's default, whose state goes with the launcher pod.
func TestTPMPersistentState(t *testing.T) {
	for _, tc := range []struct {
		name string
		tpm  *v1.TPMDevice
		want string
	}{
		{"tpm: {}", &v1.TPMDevice{}, ""},
		{"persistent", &v1.TPMDevice{Persistent: ptr.To(true)}, "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			vmi.Spec.Domain.Devices.TPM = tc.tpm
			d, err := Convert(vmi, launcherEnv(TypeQEMU, vmi))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Devices.TPMs) != 1 || d.Devices.TPMs[0].Backend.Emulator.PersistentState != tc.want {
				t.Errorf("TPMs %+v, want one with persistent_state %q", d.Devices.TPMs, tc.want)
			}
		})
	}
}

// Downward metrics: the device is the port org.github.vhostmd.1 behind the launcher's
// socket; the volume a read-only raw disk the launcher rewrites.
func TestDownwardMetrics(t *testing.T) {
	vmi := newVMI()
	vmi.Spec.Domain.Devices.DownwardMetrics = &v1.DownwardMetrics{}
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, v1.Disk{Name: "metrics", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "metrics", VolumeSource: v1.VolumeSource{DownwardMetrics: &v1.DownwardMetricsVolumeSource{}}})
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	env := launcherEnv(TypeQEMU, vmi)
	env.DownwardMetricsSocketPath = "/var/run/kubevirt-private/downward-metrics.sock"
	env.Volumes["metrics"] = HostDisk{Path: "/var/run/kubevirt-private/downward-metrics/vhostmd0"}
	d, err := Convert(vmi, env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<channel type="unix">
      <source mode="bind" path="/var/run/kubevirt-private/downward-metrics.sock"></source>
      <target type="virtio" name="org.github.vhostmd.1"></target>`,
		`<source file="/var/run/kubevirt-private/downward-metrics/vhostmd0"></source>`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the domain lacks\n%s\nin\n%s", want, out)
		}
	}
	if disk := d.Devices.Disks[len(d.Devices.Disks)-1]; disk.ReadOnly == nil || disk.Driver.Type != "raw" {
		t.Errorf("metrics disk %+v, want a read-only raw disk", disk)
	}
}
