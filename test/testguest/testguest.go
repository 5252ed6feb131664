// Package testguest describes the project's kernelBoot test guest (make images), for the e2e
// tests and the benchmarks that boot it: it prints Marker on its serial console, gets an
// address by DHCP, serves HTTP on port 80 and powers off on ACPI.
package testguest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

const (
	Image  = "vmctl/testguest:devel"
	Marker = "VMCTL-GUEST-READY"
	// DiskImage is the same guest as a bootable raw disk (BIOS and UEFI) in a containerDisk.
	DiskImage = "vmctl/testguest-disk:devel"
	// AgentInitrdPath is the guest's initramfs that also runs QEMU's guest agent (qemu-ga).
	AgentInitrdPath = "/boot/initrd-agent.img"
	// AgentOSID is the os-release ID its agent reports.
	AgentOSID = "vmctl-testguest"
)

// Spec boots the test guest with the given memory on the pod network (masquerade).
func Spec(hostname string, memory resource.Quantity) v1.VirtualMachineInstanceSpec {
	return v1.VirtualMachineInstanceSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](10),
		Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: memory}},
			Firmware: &v1.Firmware{KernelBoot: &v1.KernelBoot{
				KernelArgs: "console=ttyS0 no_timer_check vmctl.hostname=" + hostname,
				Container:  &v1.KernelBootContainer{Image: Image, KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.img"},
			}},
			Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}}},
		},
		Networks: []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
	}
}

// WithAgent makes spec (of Spec) boot the initramfs that runs the guest agent.
func WithAgent(spec v1.VirtualMachineInstanceSpec) v1.VirtualMachineInstanceSpec {
	spec.Domain.Firmware.KernelBoot.Container.InitrdPath = AgentInitrdPath
	return spec
}

// DiskSpec boots the test guest from its containerDisk by firmware (bootloader nil: BIOS,
// QEMU's default), with the given memory on the pod network.
func DiskSpec(memory resource.Quantity, bootloader *v1.Bootloader) v1.VirtualMachineInstanceSpec {
	spec := Spec("", memory)
	spec.Domain.Firmware = &v1.Firmware{Bootloader: bootloader}
	spec.Domain.Devices.Disks = []v1.Disk{{Name: "root", BootOrder: ptr.To[uint](1)}}
	spec.Volumes = []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: DiskImage}}}}
	return spec
}
