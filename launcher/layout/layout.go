// Package layout is where things are in a launcher pod (docs/node.md): the one place the pod's
// renderer (controller/vmi), virt-launcher and virt-handler take their paths and names from.
// It has no dependencies, so the launcher binary stays small.
package layout

import (
	"net"
	"path"
)

const (
	// PrivateDir is the mount point of the pod's private emptyDir in every container.
	PrivateDir = "/var/run/kubevirt-private"
	// PrivateVolume is that emptyDir's volume name; the handler finds it on the node by it.
	PrivateVolume = "private"

	// Paths relative to the private directory, the same for the launcher and the handler.
	SocketRel     = "libvirt/libvirt-sock"
	ConsoleLogRel = "console.log"
	// ConsoleLogMax is the most of console.log on disk: the launcher frees what it copied.
	ConsoleLogMax = 1 << 20
	// SerialSocketRel is serial port 0: QEMU listens, virt-handler connects for the console.
	SerialSocketRel = "virt-serial0"
	// VNCSocketRel is the guest's display: QEMU's VNC server listens, virt-handler connects
	// for `virtctl vnc`.
	VNCSocketRel = "virt-vnc"
	// AgentSocketRel is the guest agent's virtio-serial port: QEMU listens, libvirt connects.
	// libvirt's own choice of path is longer than a socket path may be.
	AgentSocketRel = "virt-agent0"
	// DownwardMetricsDiskRel is the downwardMetrics volume's disk, which the launcher makes
	// and rewrites; DownwardMetricsSocketRel the downwardMetrics device's port: QEMU
	// listens, the launcher connects and answers the guest.
	DownwardMetricsDiskRel   = "downward-metrics/vhostmd0"
	DownwardMetricsSocketRel = "downward-metrics.sock"
	KernelRel                = "kernel-boot/kernel"
	InitrdRel                = "kernel-boot/initrd"
	disksRel                 = "vmi-disks"

	// File names in a volume's disk directory.
	Qcow2DiskFile = "disk.qcow2" // a containerDisk's overlay (launcher/containerdisk)
	RawDiskFile   = "disk.raw"   // an emptyDisk
	// DiskErrorFile says why a containerDisk cannot be served, in place of its overlay.
	DiskErrorFile = "error"
	// The cloud-init data sources' disks (NoCloud: cidata; ConfigDrive: config-2).
	NoCloudISOFile     = "noCloud.iso"
	ConfigDriveISOFile = "configdrive.iso"
	PVCDiskFile        = "disk.img"
	// ConfigISOFile is a configMap, secret, serviceAccount or downwardAPI volume's files.
	ConfigISOFile = "config.iso"
	// NVRAMRel is an EFI guest's variable store, made by libvirt from OVMF's template.
	NVRAMRel = "efivars.fd" // in the directory itself, which the launcher's user may write

	// VMStateDir is where the compute container mounts the VM's state claim (an instance
	// with a persistent TPM or EFI variables): it outlives the pod, unlike PrivateDir.
	VMStateDir    = "/var/lib/vmctl/vm-state"
	VMStateVolume = "vm-state"
	// PersistentNVRAM is a persistent EFI guest's variable store, in the state claim; a
	// persistent TPM's state is in its swtpm/ (launcher/libvirtd.go).
	PersistentNVRAM = VMStateDir + "/efivars.fd"

	// HostDisksDir is where the compute container mounts each hostDisk's directory on the
	// node, one directory per volume (HostDiskDir). Not under PrivateDir: /var/run is a link
	// to /run in the image, and virt-handler reaches these through /proc/<pid>/root, where an
	// absolute link would lead off into the handler's own file system.
	HostDisksDir = "/var/lib/vmctl/host-disks"

	// BlockDevicesDir is where the compute container gets each block-mode claim as a device
	// (BlockDevice): a directory of its own, so no volume name can clash with /dev's entries.
	BlockDevicesDir = "/dev/vmi-disks"

	// SecretsDir is where the compute container mounts the Secrets cloud-init and the guest
	// agent read; ConfigVolumesDir its configMap, secret, serviceAccount and downwardAPI
	// volumes; HugepagesDir a guest's huge pages (libvirt finds it in /proc/mounts).
	SecretsDir       = "/var/run/kubevirt-secrets"
	ConfigVolumesDir = "/var/run/kubevirt-config"
	HugepagesDir     = "/dev/hugepages"

	// VirtiofsSocketsDir is where each filesystem's virtiofsd listens (VirtiofsSocket) and
	// QEMU, in compute, connects: an emptyDir of its own (VirtiofsSocketsVolume), so the
	// virtiofsd containers see nothing else of the pod's. KubeVirt's path and volume name.
	VirtiofsSocketsDir    = "/var/run/kubevirt/virtiofs-containers"
	VirtiofsSocketsVolume = "virtiofs-containers"

	// NetworkReadyRel appears once the launcher serves DHCP on the bridge virt-handler made:
	// the handler starts the domain only then, so the guest's first DHCP request is answered.
	NetworkReadyRel = "network-ready"

	// BridgeName is the masquerade binding's in-pod bridge, as KubeVirt names it (docs/node.md):
	// guest NIC --- tap0 --- k6t-br0 10.0.2.1/24 --- NAT --- eth0 <pod IP>.
	BridgeName = "k6t-br0"

	// TapDevice is the masquerade binding's tap: virt-handler creates it in the pod's network
	// namespace, owned by LauncherUID, and QEMU opens it.
	TapDevice = "tap0"
)

// The user every container of a launcher pod runs as: KubeVirt's "qemu" user, so that
// containerDisk images built for KubeVirt (files owned by 107:107) work unchanged.
const (
	LauncherUID = 107
	LauncherGID = 107
)

// The masquerade binding's private network: the bridge's address (the guest's router and DHCP
// server) and the guest's lease. Functions, so no caller can change them for the others.
func Gateway() *net.IPNet {
	return &net.IPNet{IP: net.IPv4(10, 0, 2, 1).To4(), Mask: net.CIDRMask(24, 32)}
}
func GuestIP() net.IP { return net.IPv4(10, 0, 2, 2).To4() }

// LibvirtHome holds the session libvirtd's per-user directories (HOME and XDG_*): libvirt
// and QEMU run as LauncherUID, which can write nowhere else.
const (
	libvirtHomeRel = "libvirt-home"
	LibvirtHome    = PrivateDir + "/" + libvirtHomeRel
)

// CapabilitiesRel is where the session libvirtd caches what it probed of each QEMU binary
// ($XDG_CACHE_HOME/libvirt/qemu/cache/capabilities, one <sha256 of the binary's path>.xml each),
// relative to the private directory. virt-handler seeds it from the node's trusted probe
// (virt-launcher probe-capabilities), so a new pod's libvirtd does not run QEMU to probe it again.
const CapabilitiesRel = libvirtHomeRel + "/cache/libvirt/qemu/cache/capabilities"

// LibvirtURI is the launcher's libvirtd as clients in the pod name it: a session daemon of
// LauncherUID, at the socket the handler also dials.
const LibvirtURI = "qemu:///session?socket=" + PrivateDir + "/" + SocketRel

// LibvirtEnv is the environment of the launcher's libvirtd and of clients in the pod (the
// image sets it too, so `kubectl exec ... virsh list` reaches the daemon): a session daemon
// keeps its configuration, caches and runtime files under HOME and the XDG directories.
func LibvirtEnv() []string {
	return []string{
		"HOME=" + LibvirtHome,
		"XDG_CONFIG_HOME=" + path.Join(LibvirtHome, "config"),
		"XDG_CACHE_HOME=" + path.Join(LibvirtHome, "cache"),
		"XDG_DATA_HOME=" + path.Join(LibvirtHome, "data"),
		"XDG_RUNTIME_DIR=" + path.Join(LibvirtHome, "run"),
		"LIBVIRT_DEFAULT_URI=" + LibvirtURI,
	}
}

// OVMF, from Debian's ovmf package in the launcher image: EFI guests' firmware and the
// template of their variable store. The secboot build enforces signatures (and needs SMM);
// the .ms variables have Microsoft's keys enrolled, which Debian's and most distributions'
// shim are signed with.
const (
	OVMFCode       = "/usr/share/OVMF/OVMF_CODE_4M.fd"
	OVMFVars       = "/usr/share/OVMF/OVMF_VARS_4M.fd"
	OVMFSecureCode = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd"
	OVMFSecureVars = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd"
)

// DiskRel is a volume's disk directory, relative to the private directory.
func DiskRel(volume string) string { return path.Join(disksRel, volume) }

// HostDiskDir is where the compute container mounts a hostDisk volume's directory.
func HostDiskDir(volume string) string { return path.Join(HostDisksDir, volume) }

// BlockDevice is where the compute container gets a block-mode claim's device.
func BlockDevice(volume string) string { return path.Join(BlockDevicesDir, volume) }

// ComputeDirs are the compute container's own mount points: a volume the user mounts there
// (a hook sidecar's sharedComputePath) must stay clear of them.
func ComputeDirs() []string {
	return []string{PrivateDir, SecretsDir, ConfigVolumesDir, VMStateDir, HostDisksDir, BlockDevicesDir, HugepagesDir}
}

// InPod is a path relative to the private directory as the pod's containers see it.
func InPod(rel string) string { return path.Join(PrivateDir, rel) }

// DomainName is libvirt's name for an instance's domain.
func DomainName(namespace, name string) string { return namespace + "_" + name }

// Extended resources virt-handler's device plugins advertise and launcher pods request, with
// KubeVirt's names: the kubelet then puts the host's device node into the pod, owned by the
// pod's user where the runtime honours device_ownership_from_security_context.
const (
	// KVMResource is /dev/kvm, requested by pods whose guest uses KVM.
	KVMResource = "devices.kubevirt.io/kvm"
	// TunResource is /dev/net/tun, which QEMU opens to attach to the masquerade tap.
	TunResource = "devices.kubevirt.io/tun"
)

// ConfigVolume names the launcher pod's volume behind an instance's configMap, secret,
// serviceAccount or downwardAPI volume. The kubelet fills it; virt-handler reads it from the
// kubelet's directory and gives the guest its files on an ISO disk, as KubeVirt does.
func ConfigVolume(volume string) string { return "cfg-" + volume }

// VirtiofsSocket is the socket of the virtiofsd sharing the filesystem named fs.
func VirtiofsSocket(fs string) string { return path.Join(VirtiofsSocketsDir, fs+".sock") }

// GuestLeaseRel holds the bridge binding's lease (GuestLease, JSON): virt-handler writes it
// from the pod interface before moving the pod's address to the guest; the launcher's DHCP
// offers it and the domain takes its MAC.
const GuestLeaseRel = "guest-lease.json"

// GuestLease is the pod's own address, gateway and MAC, handed to a bridge-bound guest.
type GuestLease struct {
	IP        string `json:"ip"`
	PrefixLen int    `json:"prefixLen"`
	Gateway   string `json:"gateway"`
	MAC       string `json:"mac"`
	MTU       int    `json:"mtu"`
}

// BridgeDHCPServer is the bridge binding's bridge address: link-local, so it takes nothing
// from the pod network, and the DHCP server's identifier.
func BridgeDHCPServer() *net.IPNet {
	return &net.IPNet{IP: net.IPv4(169, 254, 75, 10).To4(), Mask: net.CIDRMask(32, 32)}
}
