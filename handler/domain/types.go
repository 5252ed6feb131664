package domain

import "encoding/xml"

// The structs below mirror the subset of libvirt's domain XML schema
// (https://libvirt.org/formatdomain.html) that Convert produces. They are written by hand
// because the Go module proxy refuses libvirt.org/go/libvirtxml. Field order follows the
// order libvirt itself prints, so a dumped domain and ours read alike; libvirt's parser does
// not depend on it.

// QEMUNamespace is libvirt's namespace for QEMU pass-through elements (<qemu:commandline>).
const QEMUNamespace = "http://libvirt.org/schemas/domain/qemu/1.0"

// Domain is a libvirt <domain>.
type Domain struct {
	XMLName       xml.Name         `xml:"domain"`
	Type          string           `xml:"type,attr"`
	Name          string           `xml:"name"`
	UUID          string           `xml:"uuid"`
	Memory        Memory           `xml:"memory"`
	CurrentMemory Memory           `xml:"currentMemory"`
	VCPU          VCPU             `xml:"vcpu"`
	SysInfo       *SysInfo         `xml:"sysinfo,omitempty"`
	OS            OS               `xml:"os"`
	Features      Features         `xml:"features"`
	CPU           CPU              `xml:"cpu"`
	OnPoweroff    string           `xml:"on_poweroff"`
	OnReboot      string           `xml:"on_reboot"`
	OnCrash       string           `xml:"on_crash"`
	Devices       Devices          `xml:"devices"`
	QEMUCommand   *QEMUCommandline `xml:"http://libvirt.org/schemas/domain/qemu/1.0 commandline,omitempty"`
}

// Memory is an amount of memory; Convert always uses KiB.
type Memory struct {
	Unit  string `xml:"unit,attr"`
	Value uint64 `xml:",chardata"`
}

// VCPU is the number of virtual CPUs.
type VCPU struct {
	Placement string `xml:"placement,attr,omitempty"`
	Value     uint32 `xml:",chardata"`
}

// SysInfo carries SMBIOS strings the guest firmware reports.
type SysInfo struct {
	Type   string       `xml:"type,attr"`
	System []SysEntries `xml:"system"`
}

// SysEntries is a block of SMBIOS entries.
type SysEntries struct {
	Entries []SysEntry `xml:"entry"`
}

// SysEntry is one SMBIOS key and value.
type SysEntry struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

// OS is how the guest boots.
type OS struct {
	Type    OSType  `xml:"type"`
	Kernel  string  `xml:"kernel,omitempty"`
	Initrd  string  `xml:"initrd,omitempty"`
	Cmdline string  `xml:"cmdline,omitempty"`
	SMBIOS  *SMBIOS `xml:"smbios,omitempty"`
}

// OSType is the guest ABI: architecture, machine type and "hvm".
type OSType struct {
	Arch    string `xml:"arch,attr"`
	Machine string `xml:"machine,attr"`
	Value   string `xml:",chardata"`
}

// SMBIOS selects where SMBIOS data comes from ("sysinfo": the <sysinfo> element).
type SMBIOS struct {
	Mode string `xml:"mode,attr"`
}

// Features are hypervisor features; pointers to empty structs are on/off switches.
type Features struct {
	ACPI *struct{} `xml:"acpi,omitempty"`
	APIC *struct{} `xml:"apic,omitempty"`
}

// CPU is the guest CPU model and topology.
type CPU struct {
	Mode     string       `xml:"mode,attr"`
	Match    string       `xml:"match,attr,omitempty"`
	Check    string       `xml:"check,attr,omitempty"`
	Model    *CPUModel    `xml:"model,omitempty"`
	Topology *CPUTopology `xml:"topology,omitempty"`
}

// CPUModel is a named CPU model.
type CPUModel struct {
	Fallback string `xml:"fallback,attr,omitempty"`
	Value    string `xml:",chardata"`
}

// CPUTopology is sockets x cores x threads; the product equals <vcpu>.
type CPUTopology struct {
	Sockets uint32 `xml:"sockets,attr"`
	Cores   uint32 `xml:"cores,attr"`
	Threads uint32 `xml:"threads,attr"`
}

// Devices are the guest's devices.
type Devices struct {
	Controllers []Controller `xml:"controller"`
	Disks       []Disk       `xml:"disk"`
	Interfaces  []Interface  `xml:"interface"`
	Serials     []Serial     `xml:"serial"`
	Consoles    []Console    `xml:"console"`
}

// Controller is a disk controller, such as the virtio-scsi controller SCSI disks need.
type Controller struct {
	Type  string `xml:"type,attr"`
	Index uint   `xml:"index,attr"`
	Model string `xml:"model,attr,omitempty"`
}

// Disk is a disk or CD-ROM backed by a file.
type Disk struct {
	Type     string      `xml:"type,attr"`
	Device   string      `xml:"device,attr"`
	Driver   *DiskDriver `xml:"driver,omitempty"`
	Source   *DiskSource `xml:"source,omitempty"`
	Target   DiskTarget  `xml:"target"`
	Boot     *Boot       `xml:"boot,omitempty"`
	ReadOnly *struct{}   `xml:"readonly,omitempty"`
	Serial   string      `xml:"serial,omitempty"`
}

// DiskDriver is the QEMU block driver and image format.
type DiskDriver struct {
	Name string `xml:"name,attr"`
	Type string `xml:"type,attr"`
}

// DiskSource is the host file behind a disk.
type DiskSource struct {
	File string `xml:"file,attr"`
}

// DiskTarget is the guest-side device name and bus.
type DiskTarget struct {
	Dev string `xml:"dev,attr"`
	Bus string `xml:"bus,attr"`
}

// Boot is a device's boot priority (lower first).
type Boot struct {
	Order uint `xml:"order,attr"`
}

// Interface is a network interface that libvirt manages (tap mode).
type Interface struct {
	Type   string           `xml:"type,attr"`
	MAC    *MAC             `xml:"mac,omitempty"`
	Target *InterfaceTarget `xml:"target,omitempty"`
	Model  *Model           `xml:"model,omitempty"`
}

// MAC is a unicast MAC address.
type MAC struct {
	Address string `xml:"address,attr"`
}

// InterfaceTarget names the host-side tap; Managed "no" makes libvirt open an existing one.
type InterfaceTarget struct {
	Dev     string `xml:"dev,attr"`
	Managed string `xml:"managed,attr,omitempty"`
}

// Model is an emulated device model, such as virtio.
type Model struct {
	Type string `xml:"type,attr"`
}

// Serial is a serial port; a pty one can be both attached to and logged.
type Serial struct {
	Type   string        `xml:"type,attr"`
	Log    *Log          `xml:"log,omitempty"`
	Target *SerialTarget `xml:"target,omitempty"`
}

// Log copies a character device's output to a file.
type Log struct {
	File   string `xml:"file,attr"`
	Append string `xml:"append,attr,omitempty"`
}

// SerialTarget is the guest-side port of a serial or console device.
type SerialTarget struct {
	Type string `xml:"type,attr,omitempty"`
	Port uint   `xml:"port,attr"`
}

// Console is the console libvirt exposes (virsh console); here it aliases serial port 0.
type Console struct {
	Type   string        `xml:"type,attr"`
	Target *SerialTarget `xml:"target,omitempty"`
}

// QEMUCommandline passes extra arguments to QEMU, for what libvirt 9.0's XML cannot say
// (port forwards of user-mode networking with the built-in SLIRP stack).
type QEMUCommandline struct {
	Args []QEMUArg `xml:"arg"`
}

// QEMUArg is one QEMU argument.
type QEMUArg struct {
	Value string `xml:"value,attr"`
}
