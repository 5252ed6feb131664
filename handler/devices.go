package handler

import (
	"os"

	"github.com/vmctl/vmctl/handler/deviceplugin"
	"github.com/vmctl/vmctl/handler/kvm"
	"github.com/vmctl/vmctl/launcher/layout"
)

// devicesPerNode is how many launcher pods may hold each device at once: more than a node
// runs pods, as the devices are shared device nodes, not countable hardware.
const devicesPerNode = 1000

// tunDevicePath is the tun/tap control device QEMU opens to attach to the masquerade tap.
const tunDevicePath = "/dev/net/tun"

// NodeDevices are the host devices this node's device plugins offer launcher pods: /dev/kvm
// only when the probe found KVM usable (it refuses e.g. kvm_pvm, where guests crash), so a pod
// that asks for KVM is never placed where it cannot have it; /dev/net/tun where it exists.
func NodeDevices(kvmUsable bool, exists func(path string) bool) []deviceplugin.Device {
	var devices []deviceplugin.Device
	if kvmUsable && exists(kvm.DevicePath) {
		devices = append(devices, deviceplugin.Device{Resource: layout.KVMResource, HostPath: kvm.DevicePath, Count: devicesPerNode})
	}
	if exists(tunDevicePath) {
		devices = append(devices, deviceplugin.Device{Resource: layout.TunResource, HostPath: tunDevicePath, Count: devicesPerNode})
	}
	return devices
}

// HostHas reports whether path exists on this host (as the handler's container sees it).
func HostHas(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
