package domain

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// extraDevices are the devices besides disks, NICs and the console: the random number
// generator, memory balloon, graphics, inputs, the guest agent's channel, TPM and watchdog.
func (c *converter) extraDevices(d *libvirtxml.DomainDeviceList) {
	devs := &c.vmi.Spec.Domain.Devices
	if devs.Rng != nil {
		// /dev/urandom: never blocks, and the launcher pod has it.
		d.RNGs = []libvirtxml.DomainRNG{{Model: "virtio", Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: "/dev/urandom"}}}}
	}
	// The balloon reports the guest's own memory figures every 10 s, as KubeVirt's does
	// (kubevirt_vmi_memory_available_bytes and the like).
	d.MemBalloon = &libvirtxml.DomainMemBalloon{Model: "virtio", Stats: &libvirtxml.DomainMemBalloonStats{Period: 10}}
	if !ptr.Deref(devs.AutoattachMemBalloon, true) {
		d.MemBalloon = &libvirtxml.DomainMemBalloon{Model: "none"}
	}
	// As in KubeVirt, a guest has a VGA display unless autoattachGraphicsDevice is false,
	// which also removes the one QEMU's machine would otherwise bring.
	if devs.GraphicsAttached() {
		d.Videos = []libvirtxml.DomainVideo{{Model: libvirtxml.DomainVideoModel{Type: "vga", Heads: 1, VRam: 16384}}}
		d.Graphics = c.vnc()
	} else {
		d.Videos = []libvirtxml.DomainVideo{{Model: libvirtxml.DomainVideoModel{Type: "none"}}}
	}
	for _, in := range devs.Inputs {
		bus := in.Bus
		if bus == "" {
			bus = string(v1.DiskBusUSB)
		}
		d.Inputs = append(d.Inputs, input(in.Type, bus))
	}
	if ptr.Deref(devs.AutoattachInputDevice, false) && len(devs.Inputs) == 0 {
		d.Inputs = append(d.Inputs, input("tablet", "usb"))
	}
	if snd := devs.Sound; snd != nil {
		model := snd.Model
		if model == "" {
			model = "ich9"
		}
		d.Sounds = []libvirtxml.DomainSound{{Model: model}}
	}
	d.Channels = []libvirtxml.DomainChannel{c.agentChannel()}
	if devs.DownwardMetrics != nil {
		d.Channels = append(d.Channels, c.metricsChannel())
	}
	if devs.TPM.IsEnabled() {
		d.TPMs = []libvirtxml.DomainTPM{emulatedTPM(c.vmi.Spec.PersistentTPM())}
	}
	if w := devs.Watchdog; w != nil {
		action := "reset"
		if w.I6300ESB != nil && w.I6300ESB.Action != "" {
			action = w.I6300ESB.Action
		}
		d.Watchdogs = []libvirtxml.DomainWatchdog{{Model: "i6300esb", Action: action}}
	}
}

// emulatedTPM is KubeVirt's TPM 2.0 on the TIS interface, emulated by swtpm, which libvirt
// manufactures (swtpm_setup, EK and platform certificates from a local CA under the pod's
// private HOME) and starts beside QEMU. Its state lives as long as the launcher pod, as
// KubeVirt's non-persistent TPM; a persistent one's lives in the VM's state claim (the
// launcher links libvirt's swtpm directory there), which libvirt is told never to delete.
func emulatedTPM(persistent bool) libvirtxml.DomainTPM {
	emulator := &libvirtxml.DomainTPMBackendEmulator{Version: "2.0"}
	if persistent {
		emulator.PersistentState = "yes"
	}
	return libvirtxml.DomainTPM{Model: "tpm-tis", Backend: &libvirtxml.DomainTPMBackend{Emulator: emulator}}
}

// AgentChannel is the virtio-serial port a QEMU guest agent in the guest (qemu-ga) opens.
const AgentChannel = "org.qemu.guest_agent.0"

// agentChannel is the guest agent's port, on every domain as KubeVirt adds it: a guest whose
// image runs qemu-ga reports itself (the instance's AgentConnected condition and guestOSInfo,
// virtctl guestosinfo). libvirt connects to QEMU's socket and follows the agent through it:
// QEMU says when the guest opens or closes the port.
func (c *converter) agentChannel() libvirtxml.DomainChannel {
	src := &libvirtxml.DomainChardevSourceUNIX{Mode: "bind"}
	if c.env.AgentSocketPath != "" {
		src.Path = c.hostFile(field.NewPath("environment", "agentSocketPath"), c.env.AgentSocketPath, "agent socket")
	}
	return libvirtxml.DomainChannel{
		Source: &libvirtxml.DomainChardevSource{UNIX: src},
		Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: AgentChannel}},
	}
}

// MetricsChannel is the downwardMetrics device's port, vhostmd's name for it.
const MetricsChannel = "org.github.vhostmd.1"

// metricsChannel is the downwardMetrics device: a port QEMU listens behind, where the
// launcher answers the guest's requests for metrics.
func (c *converter) metricsChannel() libvirtxml.DomainChannel {
	path := c.hostFile(field.NewPath("environment", "downwardMetricsSocketPath"), c.env.DownwardMetricsSocketPath, "downward metrics socket")
	return libvirtxml.DomainChannel{
		Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind", Path: path}},
		Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: MetricsChannel}},
	}
}

// usbController is KubeVirt's: none unless an input device is on the USB bus (the only USB
// devices a spec can name here: disks take no usb bus), where libvirt would otherwise add a
// qemu-xhci to every domain: a PCI device the guest's kernel probes at boot and QEMU emulates
// for the VM's life, for no device.
func usbController(d *libvirtxml.DomainDeviceList) libvirtxml.DomainController {
	model := "none"
	if slices.ContainsFunc(d.Inputs, func(in libvirtxml.DomainInput) bool { return in.Bus == string(v1.DiskBusUSB) }) {
		model = "qemu-xhci"
	}
	// libvirtxml reads a USB controller back with empty USB options: set here too to round-trip.
	return libvirtxml.DomainController{Type: "usb", Index: new(uint), Model: model, USB: &libvirtxml.DomainControllerUSB{}}
}

// input is a tablet or keyboard. libvirtxml reads an input back with an empty source, so
// one is set here too for the conversion to round-trip.
func input(kind, bus string) libvirtxml.DomainInput {
	return libvirtxml.DomainInput{Type: kind, Bus: bus, Source: &libvirtxml.DomainInputSource{}}
}

// vnc is the display's VNC server on a unix socket in the pod, which virt-handler relays to
// `virtctl vnc`; none without a socket path (QEMU would otherwise listen on TCP).
func (c *converter) vnc() []libvirtxml.DomainGraphic {
	if c.env.VNCSocketPath == "" {
		return nil
	}
	path := c.hostFile(field.NewPath("environment", "vncSocketPath"), c.env.VNCSocketPath, "VNC socket")
	if path == "" {
		return nil
	}
	return []libvirtxml.DomainGraphic{{VNC: &libvirtxml.DomainGraphicVNC{
		Listeners: []libvirtxml.DomainGraphicListener{{Socket: &libvirtxml.DomainGraphicListenerSocket{Socket: path}}},
	}}}
}
