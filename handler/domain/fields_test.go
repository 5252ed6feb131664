package domain

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestConvertFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    string
		mutate func(*v1.VirtualMachineInstance)
		check  func(*libvirtxml.Domain) string // what is wrong, or ""
	}{
		{"name and uid as uuid", TypeQEMU, nil, func(d *libvirtxml.Domain) string {
			return want(d.Name+" "+d.UUID, "ns1_testvm 0b8f4a8e-4f57-4d7c-9a43-3a7d1e2f9c10")
		}},
		{"firmware uuid wins, normalised", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware.UUID = "{5D307CA9-B3EF-428C-8861-06E72D69F223}"
		}, func(d *libvirtxml.Domain) string { return want(d.UUID, "5d307ca9-b3ef-428c-8861-06e72d69f223") }},
		{"memory from request", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.Memory = nil }, func(d *libvirtxml.Domain) string {
			return want(*d.Memory, libvirtxml.DomainMemory{Unit: "KiB", Value: 96 * 1024})
		}},
		{"memory from limit", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = nil
			v.Spec.Domain.Resources = v1.ResourceRequirements{Limits: k8sv1.ResourceList{"memory": resource.MustParse("1Gi")}}
		}, func(d *libvirtxml.Domain) string { return want(d.Memory.Value, uint(1<<20)) }},
		{"guest memory wins, decimal rounded up", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			q := resource.MustParse("64M")
			v.Spec.Domain.Memory.Guest = &q
		}, func(d *libvirtxml.Domain) string { return want(d.CurrentMemory.Value, uint(62500)) }},
		{"odd bytes round up", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			q := resource.MustParse("1025")
			v.Spec.Domain.Memory.Guest = &q
		}, func(d *libvirtxml.Domain) string { return want(d.Memory.Value, uint(2)) }},
		{"topology", TypeKVM, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.CPU = &v1.CPU{Sockets: 2, Cores: 3, Threads: 2} }, func(d *libvirtxml.Domain) string {
			return want(fmt.Sprintf("%d %+v %s", d.VCPU.Value, *d.CPU.Topology, d.CPU.Mode), "12 {Sockets:2 Dies:0 Clusters:0 Cores:3 Threads:2} host-model")
		}},
		{"no cpu section means one vcpu", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.CPU = nil }, func(d *libvirtxml.Domain) string {
			return want(fmt.Sprintf("%d %+v", d.VCPU.Value, *d.CPU.Topology), "1 {Sockets:1 Dies:0 Clusters:0 Cores:1 Threads:1}")
		}},
		{"tcg replaces host-passthrough", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.CPU.Model = "host-passthrough" }, func(d *libvirtxml.Domain) string {
			return want(fmt.Sprint(d.CPU.Mode, " ", d.CPU.Model.Value), "custom "+TCGCPUModel)
		}},
		{"kvm keeps host-passthrough", TypeKVM, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.CPU.Model = "host-passthrough" }, func(d *libvirtxml.Domain) string {
			return want(fmt.Sprint(d.CPU.Mode, d.CPU.Model == nil), "host-passthroughtrue")
		}},
		{"named model kept under tcg", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.CPU.Model = "Westmere" }, func(d *libvirtxml.Domain) string {
			return want(d.CPU.Model.Value, "Westmere")
		}},
		{"machine type from spec", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.Machine = &v1.Machine{Type: "pc-q35-7.2"} }, func(d *libvirtxml.Domain) string {
			return want(*d.OS.Type, libvirtxml.DomainOSType{Arch: "x86_64", Machine: "pc-q35-7.2", Type: "hvm"})
		}},
		{"empty machine type means q35", TypeQEMU, func(v *v1.VirtualMachineInstance) { v.Spec.Domain.Machine = &v1.Machine{} }, func(d *libvirtxml.Domain) string {
			return want(d.OS.Type.Machine, "q35")
		}},
		{"disk names per bus", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks, v.Spec.Volumes = nil, nil
			for i := range 30 {
				name := fmt.Sprintf("d%d", i)
				bus := v1.DiskBusVirtio
				if i%10 == 9 {
					bus = v1.DiskBusSATA
				}
				v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, v1.Disk{Name: name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: bus}}})
				v.Spec.Volumes = append(v.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}})
			}
		}, func(d *libvirtxml.Domain) string {
			var devs []string
			for _, i := range []int{0, 9, 19, 25, 26, 28, 29} {
				devs = append(devs, d.Devices.Disks[i].Target.Dev)
			}
			return want(devs, []string{"vda", "sda", "sdb", "vdx", "vdy", "vdaa", "sdc"})
		}},
		{"solid-state scsi and sata disks", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			for i, bus := range []v1.DiskBus{v1.DiskBusSCSI, v1.DiskBusSATA} {
				name := fmt.Sprintf("ssd%d", i)
				v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, v1.Disk{Name: name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: bus, SolidState: true}}})
				v.Spec.Volumes = append(v.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}})
			}
		}, func(d *libvirtxml.Domain) string {
			var rates []uint
			for _, disk := range d.Devices.Disks {
				rates = append(rates, disk.Target.RotationRate)
			}
			return want(rates[len(rates)-3:], []uint{0, 1, 1})
		}},
		{"no interfaces, no qemu arguments", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces, v.Spec.Networks = nil, nil
		}, func(d *libvirtxml.Domain) string {
			return want(d.QEMUCommandline == nil && len(d.Devices.Interfaces) == 0, true)
		}},
		{"acpi tables from a secret: SLIC through libvirt, MSDM through QEMU", TypeQEMU, func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware.ACPI = &v1.ACPI{SlicNameRef: "license", MsdmNameRef: "license"}
			v.Spec.Volumes = append(v.Spec.Volumes, v1.Volume{Name: "license", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "keys"}}})
		}, func(d *libvirtxml.Domain) string {
			args := d.QEMUCommandline.Args
			return want(fmt.Sprint(d.OS.ACPI.Tables, args[len(args)-2:]),
				"[{slic /var/run/kubevirt-config/license/slic.bin}] [{-acpitable} {sig=MSDM,file=/var/run/kubevirt-config/license/msdm.bin}]")
		}},
		{"lifecycle and acpi", TypeQEMU, nil, func(d *libvirtxml.Domain) string {
			return want(fmt.Sprint(d.OnPoweroff, d.OnReboot, d.OnCrash, d.Features.ACPI != nil), "destroyrestartdestroytrue")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI()
			if tc.mutate != nil {
				tc.mutate(vmi)
			}
			env := launcherEnv(tc.typ, vmi)
			for _, vol := range vmi.Spec.Volumes {
				if _, ok := env.Volumes[vol.Name]; !ok {
					env.Volumes[vol.Name] = HostDisk{Path: "/disks/" + vol.Name}
				}
			}
			d, err := Convert(vmi, env)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(d); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func want[T any](got, want T) string {
	if diff := cmp.Diff(want, got); diff != "" {
		return "(-want +got)\n" + diff
	}
	return ""
}

func TestDiskLetters(t *testing.T) {
	for n, s := range map[int]string{0: "a", 25: "z", 26: "aa", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := diskLetters(n); got != s {
			t.Errorf("diskLetters(%d) = %q, want %q", n, got, s)
		}
	}
}

func TestDefaultForwards(t *testing.T) {
	got := DefaultForwards(v1.Interface{Ports: []v1.Port{{Port: 80}, {Protocol: "UDP", Port: 53}}})
	if msg := want(got, []PortForward{{"tcp", 80, 80}, {"udp", 53, 53}}); msg != "" {
		t.Error(msg)
	}
}
