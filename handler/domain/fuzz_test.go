package domain

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// fuzzInput is the fuzzed part of an instance and its environment.
type fuzzInput struct {
	name, ns, uid, mem              string
	cores, sockets, threads         uint32
	model, machine, kernelArgs      string
	diskName, volName               string
	volKind                         uint8
	bus                             string
	cdrom                           bool
	boot                            uint
	mac, nicModel, cidr, proto      string
	port                            int32
	tcg                             bool
	serial, hostPath, initrd, iface string
}

// valid converts: the fuzzer starts from an input that reaches the marshalling code.
var valid = fuzzInput{"testvm", "ns1", "0b8f4a8e-4f57-4d7c-9a43-3a7d1e2f9c10", "96Mi", 2, 1, 1, "", "", "console=ttyS0",
	"root", "root", 0, "virtio", false, 1, "02:00:00:00:00:01", "virtio", "10.0.2.0/24", "tcp", 80, false, "serial", "/d/root", "/boot/initrd", "default"}

func (in fuzzInput) build() (*v1.VirtualMachineInstance, Environment) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace, vmi.UID = in.name, in.ns, types.UID(in.uid)
	spec := &vmi.Spec
	if q, err := resource.ParseQuantity(in.mem); err == nil {
		spec.Domain.Resources.Requests = k8sv1.ResourceList{"memory": q}
	}
	spec.Domain.CPU = &v1.CPU{Cores: in.cores, Sockets: in.sockets, Threads: in.threads, Model: in.model}
	spec.Domain.Machine = &v1.Machine{Type: in.machine}
	spec.Domain.Firmware = &v1.Firmware{UUID: types.UID(in.uid), Serial: in.serial, KernelBoot: &v1.KernelBoot{
		KernelArgs: in.kernelArgs, Container: &v1.KernelBootContainer{KernelPath: in.hostPath, InitrdPath: in.initrd}}}
	disk := v1.Disk{Name: in.diskName, Serial: in.serial}
	if in.boot > 0 {
		disk.BootOrder = &in.boot
	}
	if in.cdrom {
		disk.CDRom = &v1.CDRomTarget{Bus: v1.DiskBus(in.bus)}
	} else {
		disk.Disk = &v1.DiskTarget{Bus: v1.DiskBus(in.bus), ReadOnly: in.volKind&8 != 0}
	}
	spec.Domain.Devices.Disks = []v1.Disk{disk}
	vol := v1.Volume{Name: in.volName}
	switch in.volKind % 5 { // 4: no source at all
	case 0:
		vol.ContainerDisk = &v1.ContainerDiskSource{}
	case 1:
		vol.CloudInitNoCloud = &v1.CloudInitNoCloudSource{}
	case 2:
		vol.EmptyDisk = &v1.EmptyDiskSource{}
	case 3:
		vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ReadOnly: in.volKind&16 != 0}
	}
	spec.Volumes = []v1.Volume{vol}
	spec.Domain.Devices.Interfaces = []v1.Interface{{Name: in.iface, Model: in.nicModel, MacAddress: in.mac}}
	spec.Networks = []v1.Network{{Name: in.iface, NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{VMNetworkCIDR: in.cidr}}}}

	env := Environment{DomainType: TypeKVM, KernelPath: in.hostPath, InitrdPath: in.initrd, SerialLogPath: in.hostPath, SerialSocketPath: in.hostPath,
		Volumes:    map[string]HostDisk{in.volName: {Path: in.hostPath}},
		Interfaces: map[string]Attachment{in.iface: {Mode: NetworkUser, Forwards: []PortForward{{Protocol: in.proto, Port: in.port, GuestPort: in.port}}}}}
	if in.tcg {
		// Emulation, and a tap named by fuzzed text, with a fuzzed image format.
		env.DomainType = TypeQEMU
		env.Interfaces[in.iface] = Attachment{Mode: NetworkTap, TapDevice: in.serial}
		env.Volumes[in.volName] = HostDisk{Path: in.hostPath, Format: in.proto}
	}
	return vmi, env
}

func TestFuzzSeedConverts(t *testing.T) {
	for _, in := range []fuzzInput{valid, func() fuzzInput { v := valid; v.tcg, v.proto = true, "qcow2"; return v }()} {
		d, err := Convert(in.build())
		if err != nil {
			t.Fatal(err)
		}
		out, err := Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, d, out)
	}
}

// FuzzConvert builds instances from fuzzed fields and checks that Convert never panics and
// that whatever it accepts marshals to well-formed XML that round-trips through libvirtxml.
// The token loop checks the whole document, which Unmarshal alone does not.
func FuzzConvert(f *testing.F) {
	add := func(in fuzzInput) {
		f.Add(in.name, in.ns, in.uid, in.mem, in.cores, in.sockets, in.threads, in.model, in.machine, in.kernelArgs,
			in.diskName, in.volName, in.volKind, in.bus, in.cdrom, in.boot, in.mac, in.nicModel, in.cidr, in.proto,
			in.port, in.tcg, in.serial, in.hostPath, in.initrd, in.iface)
	}
	add(valid)
	add(fuzzInput{"a", "b", "", "1Ei", 0, 300, 0, "host-passthrough", "pc", "a\x00", "x", "y", 3, "scsi", true, 0,
		"ff:ff:ff:ff:ff:ff", "e1000", "::1/64", "udp", -1, true, "tap\n0", "rel", "", "x,y"})
	f.Fuzz(func(t *testing.T, name, ns, uid, mem string, cores, sockets, threads uint32, model, machine, kernelArgs,
		diskName, volName string, volKind uint8, bus string, cdrom bool, boot uint, mac, nicModel, cidr, proto string,
		port int32, tcg bool, serial, hostPath, initrd, iface string) {
		in := fuzzInput{name, ns, uid, mem, cores, sockets, threads, model, machine, kernelArgs, diskName, volName,
			volKind, bus, cdrom, boot, mac, nicModel, cidr, proto, port, tcg, serial, hostPath, initrd, iface}
		d, err := Convert(in.build())
		if err != nil {
			return
		}
		out, err := Marshal(d)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		dec := xml.NewDecoder(bytes.NewReader(out))
		for {
			if _, err := dec.Token(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("not well-formed XML: %v\n%s", err, out)
			}
		}
		roundTrip(t, d, out)
	})
}
