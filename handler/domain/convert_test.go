package domain

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// newVMI is a small valid kernel-boot guest with one containerDisk and the default pod
// network, already defaulted as the API server would store it.
func newVMI() *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "testvm", Namespace: "ns1", UID: "0b8f4a8e-4f57-4d7c-9a43-3a7d1e2f9c10"},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{
				CPU:       &v1.CPU{Cores: 2},
				Resources: v1.ResourceRequirements{Requests: k8sv1.ResourceList{"memory": resource.MustParse("96Mi")}},
				Firmware: &v1.Firmware{KernelBoot: &v1.KernelBoot{KernelArgs: "console=ttyS0", Container: &v1.KernelBootContainer{
					Image: "guest", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.img"}}},
				Devices: v1.Devices{Disks: []v1.Disk{{Name: "root"}}},
			},
			Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk"}}}},
		},
	}
	v1.SetDefaults_VirtualMachineInstanceSpec(&vmi.Spec)
	return vmi
}

// roundTrip checks that out parses back into d with libvirtxml, as the node reads live
// domains, and prints the same bytes again. Element names (XMLName) are set only by parsing.
func roundTrip(t *testing.T, d *libvirtxml.Domain, out []byte) {
	t.Helper()
	var back libvirtxml.Domain
	if err := back.Unmarshal(string(out)); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if diff := cmp.Diff(d, &back, cmpopts.EquateEmpty(), cmpopts.IgnoreTypes(xml.Name{})); diff != "" {
		t.Fatalf("round trip changed the domain (-converted +parsed):\n%s", diff)
	}
	again, err := Marshal(&back)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("re-marshal differs (err %v):\n%s\n---\n%s", err, out, again)
	}
}

func TestConvertErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*v1.VirtualMachineInstance, *Environment)
		want   string // a field path and what is wrong with it
	}{
		{"no memory", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Memory, v.Spec.Domain.Resources = nil, v1.ResourceRequirements{}
		}, "spec.domain.memory.guest: Required value"},
		{"zero memory", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Memory.Guest = ptr.To(resource.MustParse("0"))
		}, "spec.domain.memory.guest: Invalid value"},
		{"disk without volume", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Volumes[0].Name = "other" }, "spec.domain.devices.disks[0].name: Invalid value: \"root\": no volume"},
		{"volume kind unsupported", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Volumes[0].ContainerDisk = nil }, "spec.volumes[0]: Invalid value: \"root\": must set exactly one supported volume source"},
		{"two volume kinds", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Volumes[0].EmptyDisk = &v1.EmptyDiskSource{}
		}, "spec.volumes[0]: Invalid value"},
		{"duplicate volume", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Volumes = append(v.Spec.Volumes, v.Spec.Volumes[0])
		}, "spec.volumes[1].name: Duplicate value"},
		{"duplicate disk", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, v.Spec.Domain.Devices.Disks[0])
		}, "spec.domain.devices.disks[1].name: Duplicate value"},
		{"disk and cdrom", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].CDRom = &v1.CDRomTarget{}
		}, "spec.domain.devices.disks[0]: Invalid value"},
		{"virtio cdrom", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusVirtio}}
		}, "spec.domain.devices.disks[0].cdrom.bus: Unsupported value: \"virtio\""},
		{"writable cdrom", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{ReadOnly: ptr.To(false)}}
		}, "spec.domain.devices.disks[0].cdrom.readonly"},
		{"usb disk", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].Disk.Bus = v1.DiskBusUSB
		}, "spec.domain.devices.disks[0].disk.bus: Unsupported value: \"usb\""},
		{"read-only sata disk", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].Disk = &v1.DiskTarget{Bus: v1.DiskBusSATA, ReadOnly: true}
		}, "spec.domain.devices.disks[0]: Invalid value: \"root\": a read-only disk cannot be on the sata bus"},
		{"solid-state virtio disk", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].Disk = &v1.DiskTarget{Bus: v1.DiskBusVirtio, SolidState: true}
		}, "spec.domain.devices.disks[0].disk.solidState: Invalid value: true: only a scsi or sata disk"},
		{"boot order zero", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Disks[0].BootOrder = ptr.To[uint](0)
		}, "spec.domain.devices.disks[0].bootOrder"},
		{"bad disk serial", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Domain.Devices.Disks[0].Serial = "a,b" }, "spec.domain.devices.disks[0].serial"},
		{"no disk image", func(_ *v1.VirtualMachineInstance, e *Environment) { delete(e.Volumes, "root") }, "spec.volumes[0]: Invalid value: \"\": the node resolved no absolute disk image path"},
		{"bad image format", func(_ *v1.VirtualMachineInstance, e *Environment) {
			e.Volumes["root"] = HostDisk{Path: "/d", Format: "vmdk"}
		}, "spec.volumes[0]: Invalid value: \"vmdk\""},
		{"no kernel file", func(_ *v1.VirtualMachineInstance, e *Environment) { e.KernelPath = "" }, "spec.domain.firmware.kernelBoot.container.kernelPath: Invalid value"},
		{"initrd only", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Firmware.KernelBoot.Container.KernelPath = ""
		}, "spec.domain.firmware.kernelBoot.container.kernelPath: Required value"},
		{"kernel args without container", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Domain.Firmware.KernelBoot.Container = nil }, "spec.domain.firmware.kernelBoot.container: Required value"},
		{"control character in kernel args", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Firmware.KernelBoot.KernelArgs = "a\x00b"
		}, "spec.domain.firmware.kernelBoot.kernelArgs"},
		{"bad firmware uuid", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Domain.Firmware.UUID = "nope" }, "spec.domain.firmware.uuid: Invalid value"},
		{"no uuid at all", func(v *v1.VirtualMachineInstance, _ *Environment) { v.UID = "" }, "spec.domain.firmware.uuid: Required value"},
		{"bad name", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Name = "a/b" }, "metadata.name: Invalid value"},
		{"no namespace", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Namespace = "" }, "metadata.namespace: Invalid value"},
		{"too many vcpus", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.CPU = &v1.CPU{Cores: 1 << 31, Sockets: 4}
		}, "spec.domain.cpu: Invalid value"},
		{"bad machine", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Machine = &v1.Machine{Type: "q35,accel=kvm"}
		}, "spec.domain.machine.type"},
		{"interface without network", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Networks = nil }, "spec.domain.devices.interfaces[0].name: Invalid value: \"default\": no network"},
		{"non-pod network", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Networks[0].Pod = nil }, "spec.networks[0]: Invalid value"},
		{"unknown nic model", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Domain.Devices.Interfaces[0].Model = "ne2k" }, "spec.domain.devices.interfaces[0].model: Unsupported value"},
		{"multicast mac", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Devices.Interfaces[0].MacAddress = "01:00:5e:00:00:01"
		}, "spec.domain.devices.interfaces[0].macAddress: Invalid value"},
		{"injected cidr", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Networks[0].Pod.VMNetworkCIDR = "10.0.0.0/24,smb=/"
		}, "spec.networks[0].pod.vmNetworkCIDR"},
		{"tiny cidr", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Networks[0].Pod.VMNetworkCIDR = "10.0.0.0/30"
		}, "spec.networks[0].pod.vmNetworkCIDR"},
		{"no attachment", func(_ *v1.VirtualMachineInstance, e *Environment) { delete(e.Interfaces, "default") }, "spec.domain.devices.interfaces[0]: Required value"},
		{"bad tap", func(_ *v1.VirtualMachineInstance, e *Environment) {
			e.Interfaces["default"] = Attachment{Mode: NetworkTap, TapDevice: "a/b"}
		}, "environment.interfaces[default].tapDevice"},
		{"unknown mode", func(_ *v1.VirtualMachineInstance, e *Environment) {
			e.Interfaces["default"] = Attachment{Mode: "bridge"}
		}, "environment.interfaces[default].mode: Unsupported value"},
		{"bad forward", func(_ *v1.VirtualMachineInstance, e *Environment) {
			e.Interfaces["default"] = Attachment{Mode: NetworkUser, Forwards: []PortForward{{Protocol: "tcp", Port: 0, GuestPort: 80}}}
		}, "environment.interfaces[default].forwards[0]"},
		{"forward twice", func(_ *v1.VirtualMachineInstance, e *Environment) {
			f := PortForward{Protocol: "tcp", Port: 80, GuestPort: 80}
			e.Interfaces["default"] = Attachment{Mode: NetworkUser, Forwards: []PortForward{f, f}}
		}, "environment.interfaces[default].forwards[1]: Duplicate value: \"tcp/80\""},
		{"acpi without a table", func(v *v1.VirtualMachineInstance, _ *Environment) { v.Spec.Domain.Firmware.ACPI = &v1.ACPI{} },
			"spec.domain.firmware.acpi: Required value"},
		{"acpi table not from a secret", func(v *v1.VirtualMachineInstance, _ *Environment) {
			v.Spec.Domain.Firmware.ACPI = &v1.ACPI{MsdmNameRef: "root"}
		}, `spec.domain.firmware.acpi.msdmNameRef: Invalid value: "root": must name a secret volume`},
		{"relative serial log", func(_ *v1.VirtualMachineInstance, e *Environment) { e.SerialLogPath = "serial.log" }, "environment.serialLogPath"},
		{"relative serial socket", func(_ *v1.VirtualMachineInstance, e *Environment) { e.SerialSocketPath = "virt-serial0" }, "environment.serialSocketPath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			vmi.Spec.Domain.Firmware.UUID = ""
			env := launcherEnv(TypeQEMU, vmi)
			tc.mutate(vmi, &env)
			d, err := Convert(vmi, env)
			if err == nil {
				t.Fatalf("no error; domain %+v", d)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestConvertEnvironmentAndNil(t *testing.T) {
	if _, err := Convert(nil, Environment{DomainType: TypeQEMU}); err == nil {
		t.Error("nil VMI: no error")
	}
	if _, err := Convert(newVMI(), Environment{DomainType: "xen"}); err == nil || !strings.Contains(err.Error(), `"xen"`) {
		t.Errorf("domain type xen: error %v", err)
	}
}

// TestKernelCmdlineUnderEmulation: an emulated guest's kernel skips its boot-time timer
// check, whatever the spec's arguments; a KVM guest gets exactly the spec's.
func TestKernelCmdlineUnderEmulation(t *testing.T) {
	for _, tc := range []struct {
		domainType, args, want string
	}{
		{TypeKVM, "console=ttyS0", "console=ttyS0"},
		{TypeKVM, "", ""},
		{TypeQEMU, "console=ttyS0", "console=ttyS0 no_timer_check"},
		{TypeQEMU, "", "no_timer_check"},
		{TypeQEMU, "no_timer_check console=ttyS0", "no_timer_check console=ttyS0"},
	} {
		vmi := newVMI()
		vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs = tc.args
		d, err := Convert(vmi, launcherEnv(tc.domainType, vmi))
		if err != nil {
			t.Fatalf("%s %q: %v", tc.domainType, tc.args, err)
		}
		if d.OS.Cmdline != tc.want {
			t.Errorf("%s %q: cmdline %q, want %q", tc.domainType, tc.args, d.OS.Cmdline, tc.want)
		}
	}
}
