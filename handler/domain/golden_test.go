package domain

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// launcherEnv is what a launcher resolves for the golden cases: files under the pod's
// private directory and user-mode networking that publishes the ports the spec lists.
func launcherEnv(domainType string, vmi *v1.VirtualMachineInstance) Environment {
	env := Environment{
		DomainType:       domainType,
		Volumes:          map[string]HostDisk{},
		KernelPath:       "/var/run/kubevirt-private/kernel-boot/vmlinuz",
		InitrdPath:       "/var/run/kubevirt-private/kernel-boot/initrd.img",
		SerialLogPath:    "/var/run/kubevirt-private/serial0.log",
		SerialSocketPath: "/var/run/kubevirt-private/virt-serial0",
		VNCSocketPath:    "/var/run/kubevirt-private/virt-vnc",
		AgentSocketPath:  "/var/run/kubevirt-private/virt-agent0",
		NVRAMPath:        "/var/run/kubevirt-private/efivars.fd",
		Interfaces:       map[string]Attachment{},
	}
	for _, vol := range vmi.Spec.Volumes {
		switch {
		case vol.ContainerDisk != nil:
			env.Volumes[vol.Name] = HostDisk{Path: "/var/run/kubevirt-ephemeral-disks/" + vol.Name + "/overlay.qcow2", Format: "qcow2"}
		case vol.CloudInitNoCloud != nil:
			env.Volumes[vol.Name] = HostDisk{Path: "/var/run/kubevirt-ephemeral-disks/cloud-init/" + vol.Name + ".iso"}
		case vol.EmptyDisk != nil:
			env.Volumes[vol.Name] = HostDisk{Path: "/var/run/kubevirt-ephemeral-disks/empty/" + vol.Name + ".img"}
		case vol.PersistentVolumeClaim != nil:
			env.Volumes[vol.Name] = HostDisk{Path: "/var/run/kubevirt-private/vmi-disks/" + vol.Name + "/disk.img"}
		}
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		env.Interfaces[iface.Name] = Attachment{Mode: NetworkUser, Forwards: DefaultForwards(iface)}
	}
	return env
}

func loadExample(t *testing.T, path string) *v1.VirtualMachineInstance {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vmi := &v1.VirtualMachineInstance{}
	if err := yaml.UnmarshalStrict(data, vmi); err != nil {
		t.Fatal(err)
	}
	vmi.Namespace, vmi.UID = "default", "6a1e3ac2-0b7c-4c5e-9d5c-1f2f3a4b5c6d"
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	return vmi
}

// containerDiskVMI is the usual cloud image guest: a containerDisk root, cloud-init NoCloud
// user data and a scratch emptyDisk, on the defaulted pod network.
func containerDiskVMI() *v1.VirtualMachineInstance {
	vmi := newVMI()
	vmi.Spec.Domain.Firmware = nil
	vmi.Spec.Domain.Devices.Disks = []v1.Disk{
		{Name: "containerdisk", BootOrder: ptr.To[uint](1)},
		{Name: "cloudinitdisk"},
		{Name: "scratch", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSCSI}}},
	}
	vmi.Spec.Volumes = []v1.Volume{
		{Name: "containerdisk", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "kubevirt/cirros-container-disk-demo:latest"}}},
		{Name: "cloudinitdisk", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
	}
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	return vmi
}

// uuidMACVMI has a firmware UUID and serial, a MAC, a read-only SATA CD-ROM and a PVC, and
// is attached through a tap the launcher made.
func uuidMACVMI() *v1.VirtualMachineInstance {
	vmi := containerDiskVMI()
	vmi.Spec.Domain.Firmware = &v1.Firmware{UUID: "5D307CA9-B3EF-428C-8861-06E72D69F223", Serial: "vmctl-0001"}
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks,
		v1.Disk{Name: "data", Serial: "DATA-1"},
		v1.Disk{Name: "installer", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{}}, BootOrder: ptr.To[uint](2)})
	vmi.Spec.Volumes = append(vmi.Spec.Volumes,
		v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: true}}},
		v1.Volume{Name: "installer", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "installer:1"}}})
	vmi.Spec.Domain.Devices.Interfaces[0].MacAddress = "02-00-00-AB-CD-EF"
	vmi.Spec.Domain.Devices.Interfaces[0].Model = "e1000e"
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	return vmi
}

// firmwareVMI boots the containerDisk by the given bootloader.
func firmwareVMI(b *v1.Bootloader) *v1.VirtualMachineInstance {
	vmi := containerDiskVMI()
	vmi.Spec.Domain.Firmware = &v1.Firmware{Bootloader: b}
	return vmi
}

func TestGolden(t *testing.T) {
	tap := func(env Environment) Environment {
		env.Interfaces["default"] = Attachment{Mode: NetworkTap, TapDevice: "tap0"}
		return env
	}
	for _, tc := range []struct {
		golden string
		vmi    *v1.VirtualMachineInstance
		env    func(*v1.VirtualMachineInstance) Environment
	}{
		{"kernelboot", loadExample(t, "../../examples/vmi-kernelboot.yaml"), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"containerdisk-cloudinit-emptydisk", containerDiskVMI(), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"uuid-mac-tap", uuidMACVMI(), func(v *v1.VirtualMachineInstance) Environment { return tap(launcherEnv(TypeKVM, v)) }},
		{"type-qemu", newVMI(), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"type-kvm", newVMI(), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeKVM, v) }},
		{"bios-serial", firmwareVMI(&v1.Bootloader{BIOS: &v1.BIOS{UseSerial: ptr.To(true)}}), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"efi", firmwareVMI(&v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"efi-secureboot", firmwareVMI(&v1.Bootloader{EFI: &v1.EFI{}}), func(v *v1.VirtualMachineInstance) Environment { return launcherEnv(TypeQEMU, v) }},
		{"kubevirt-devices", loadExample(t, "testdata/specs/kubevirt-devices.yaml"), func(v *v1.VirtualMachineInstance) Environment { return tap(launcherEnv(TypeKVM, v)) }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			d, err := Convert(tc.vmi, tc.env(tc.vmi))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden+".xml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, cmp.Diff(string(want), string(got)))
			}
			roundTrip(t, d, got)
		})
	}
}
