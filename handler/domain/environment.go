package domain

import (
	"strings"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Domain types: libvirt's "kvm" needs a usable hardware KVM (see package handler/kvm); "qemu"
// is QEMU's software emulator, TCG, as KubeVirt's useEmulation gives.
const (
	TypeKVM  = "kvm"
	TypeQEMU = "qemu"
)

// Environment is what the node resolved for one instance: the hypervisor to use and where
// each source of the instance lives inside its launcher pod. Convert never touches the file
// system; the launcher must have created every file named here before the domain starts.
type Environment struct {
	// DomainType is TypeKVM or TypeQEMU.
	DomainType string
	// Volumes maps a volume name (spec.volumes[].name) to its disk image in the pod: the
	// containerDisk image file (or a qcow2 overlay on it, as writes must be discarded), the
	// cloud-init NoCloud ISO, the emptyDisk sparse file, or a PVC's disk.img.
	Volumes map[string]HostDisk
	// KernelPath and InitrdPath are the kernelBoot files copied out of their image.
	KernelPath string
	InitrdPath string
	// NVRAMPath is where an EFI guest's variable store lives in the pod (libvirt copies
	// OVMF's template there on first start).
	NVRAMPath string
	// SerialSocketPath is where QEMU listens with serial port 0: virt-handler connects there
	// for the console (one client at a time); empty gives a pty instead.
	SerialSocketPath string
	// VNCSocketPath is where QEMU's VNC server listens for a guest with a graphics device:
	// virt-handler connects there for `virtctl vnc`; empty gives no VNC server.
	VNCSocketPath string
	// AgentSocketPath is where QEMU listens with the guest agent's port, and libvirt
	// connects; empty lets libvirt pick a path in its state directory.
	AgentSocketPath string
	// DownwardMetricsSocketPath is where QEMU listens with the downwardMetrics device's port,
	// and the launcher connects to answer the guest.
	DownwardMetricsSocketPath string
	// VirtiofsSockets maps a filesystem's name (spec.domain.devices.filesystems[].name) to
	// the socket where its virtiofsd, a container of the launcher pod, listens.
	VirtiofsSockets map[string]string
	// SerialLogPath receives a copy of everything the guest writes to its serial console;
	// empty keeps no copy. QEMU writes it itself (qemu.conf stdio_handler="file").
	SerialLogPath string
	// Interfaces maps an interface name (spec.domain.devices.interfaces[].name) to how the
	// launcher attached it to the pod network.
	Interfaces map[string]Attachment
}

// HostDisk is a disk image file, or a block device, in the launcher pod.
type HostDisk struct {
	// Path is absolute.
	Path string
	// Format is "raw" (the default) or "qcow2". libvirt does not probe image formats, so a
	// qcow2 file announced as raw would show the guest the qcow2 header.
	Format string
	// Block says Path is a block device (a block-mode claim), raw.
	Block bool
}

// NetworkMode is how a guest NIC reaches the pod network.
type NetworkMode string

const (
	// NetworkUser is QEMU's built-in user-mode stack (SLIRP): the guest sits behind NAT on
	// VMNetworkCIDR (default 10.0.2.0/24) and Forwards publish guest ports on the pod IP.
	// It needs no capabilities beyond what libvirt itself needs, and it was measured to
	// work in an unprivileged launcher pod. libvirt 9.0 cannot express SLIRP port forwards
	// in <interface>, so Convert passes -netdev/-device through <qemu:commandline>.
	NetworkUser NetworkMode = "user"
	// NetworkTap attaches the NIC to a tap device virt-handler already created and wired in
	// the pod's network namespace (masquerade: in-pod bridge + DNAT/MASQUERADE), owned by
	// the pod's user; QEMU opens /dev/net/tun, a device-plugin resource of the pod.
	NetworkTap NetworkMode = "tap"
)

// Attachment is how one interface is attached.
type Attachment struct {
	Mode NetworkMode
	// Forwards are the pod ports forwarded to the guest (NetworkUser only).
	Forwards []PortForward
	// TapDevice is the existing tap device's name (NetworkTap only).
	TapDevice string
	// MAC is the guest's MAC when the spec names none (the bridge binding's: the pod's).
	MAC string
}

// PortForward publishes a guest port on a pod port.
type PortForward struct {
	// Protocol is "tcp" or "udp".
	Protocol  string
	Port      int32
	GuestPort int32
}

// DefaultForwards are the forwards a masquerade interface asks for: each listed port on the
// same pod port. An interface that lists no port means "forward everything", which
// user-mode networking cannot do: the launcher must then choose tap mode or accept that
// nothing is published.
func DefaultForwards(iface v1.Interface) []PortForward {
	var out []PortForward
	for _, p := range iface.Ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		out = append(out, PortForward{Protocol: proto, Port: p.Port, GuestPort: p.Port})
	}
	return out
}
