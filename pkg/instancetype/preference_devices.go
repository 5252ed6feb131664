package instancetype

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// applyDevicePreferences fills the device fields the spec leaves unset. preferredVideoType
// has no field to fill: instances here have no video device.
func applyDevicePreferences(p *itv1beta1.DevicePreferences, d *v1.Devices) {
	if p == nil {
		return
	}
	for _, b := range []struct {
		dst  **bool
		pref *bool
	}{
		{&d.AutoattachGraphicsDevice, p.PreferredAutoattachGraphicsDevice},
		{&d.AutoattachMemBalloon, p.PreferredAutoattachMemBalloon},
		{&d.AutoattachPodInterface, p.PreferredAutoattachPodInterface},
		{&d.AutoattachSerialConsole, p.PreferredAutoattachSerialConsole},
		{&d.AutoattachInputDevice, p.PreferredAutoattachInputDevice},
		{&d.UseVirtioTransitional, p.PreferredUseVirtioTransitional},
		{&d.BlockMultiQueue, p.PreferredBlockMultiQueue},
		{&d.NetworkInterfaceMultiQueue, p.PreferredNetworkInterfaceMultiQueue},
	} {
		if b.pref != nil && *b.dst == nil {
			*b.dst = ptr.To(*b.pref)
		}
	}
	// disableHotplug is a plain bool: only a preferred true can change it.
	if p.PreferredDisableHotplug != nil && !d.DisableHotplug {
		d.DisableHotplug = *p.PreferredDisableHotplug
	}
	if p.PreferredRng != nil && d.Rng == nil {
		d.Rng = p.PreferredRng.DeepCopy()
	}
	if p.PreferredTPM != nil && d.TPM == nil {
		d.TPM = p.PreferredTPM.DeepCopy()
	}
	if p.PreferredSoundModel != "" && d.Sound != nil && d.Sound.Model == "" {
		d.Sound.Model = p.PreferredSoundModel
	}
	for i := range d.Inputs {
		in := &d.Inputs[i]
		if p.PreferredInputBus != "" && in.Bus == "" {
			in.Bus = p.PreferredInputBus
		}
		if p.PreferredInputType != "" && in.Type == "" {
			in.Type = p.PreferredInputType
		}
	}
	for i := range d.Disks {
		applyDiskPreferences(p, &d.Disks[i])
	}
	for i := range d.Interfaces {
		iface := &d.Interfaces[i]
		if p.PreferredInterfaceModel != "" && iface.Model == "" {
			iface.Model = p.PreferredInterfaceModel
		}
		if p.PreferredInterfaceMasquerade != nil && equality.Semantic.DeepEqual(iface.InterfaceBindingMethod, v1.InterfaceBindingMethod{}) && iface.Binding == nil {
			iface.Masquerade = p.PreferredInterfaceMasquerade.DeepCopy()
		}
	}
}

// applyDiskPreferences: a disk that names no device is a hard disk, as it would be by
// default, so the disk preferences reach it.
func applyDiskPreferences(p *itv1beta1.DevicePreferences, disk *v1.Disk) {
	dev := &disk.DiskDevice
	switch {
	case dev.CDRom != nil:
		if p.PreferredCdromBus != "" && dev.CDRom.Bus == "" {
			dev.CDRom.Bus = p.PreferredCdromBus
		}
		return
	case dev.LUN != nil:
		if p.PreferredLunBus != "" && dev.LUN.Bus == "" {
			dev.LUN.Bus = p.PreferredLunBus
		}
		return
	case dev.Disk == nil:
		dev.Disk = &v1.DiskTarget{}
	}
	if p.PreferredDiskBus != "" && dev.Disk.Bus == "" {
		dev.Disk.Bus = p.PreferredDiskBus
	}
	if p.PreferredDiskBlockSize != nil && disk.BlockSize == nil {
		disk.BlockSize = p.PreferredDiskBlockSize.DeepCopy()
	}
	if p.PreferredDiskCache != "" && disk.Cache == "" {
		disk.Cache = p.PreferredDiskCache
	}
	if p.PreferredDiskIO != "" && disk.IO == "" {
		disk.IO = p.PreferredDiskIO
	}
	if p.PreferredDiskDedicatedIoThread != nil && disk.DedicatedIOThread == nil && dev.Disk.Bus == v1.DiskBusVirtio {
		disk.DedicatedIOThread = ptr.To(*p.PreferredDiskDedicatedIoThread)
	}
}
