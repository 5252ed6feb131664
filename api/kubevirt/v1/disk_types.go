package v1

// Disk is a guest disk; its source is the volume of the same name.
type Disk struct {
	// +kubebuilder:validation:MinLength=1
	Name       string `json:"name"`
	DiskDevice `json:",inline"`
	// BootOrder sets the boot priority: lower boots first. Devices without one are not
	// tried when any disk or interface has one.
	// +kubebuilder:validation:Minimum=1
	// +optional
	BootOrder *uint `json:"bootOrder,omitempty"`
	// +optional
	Serial string `json:"serial,omitempty"`
	// DedicatedIOThread gives this disk an I/O thread of its own.
	// +optional
	DedicatedIOThread *bool `json:"dedicatedIOThread,omitempty"`
	// Cache is QEMU's cache mode: none, writethrough or writeback. Empty: none where the file
	// system allows O_DIRECT, else writethrough.
	// +kubebuilder:validation:Enum=none;writethrough;writeback
	// +optional
	Cache DriverCache `json:"cache,omitempty"`
	// IO is QEMU's I/O mode: native, threads or default.
	// +kubebuilder:validation:Enum=native;threads;default
	// +optional
	IO DriverIO `json:"io,omitempty"`
	// Tag is shown to the guest in the config drive's device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
	// +optional
	BlockSize *BlockSize `json:"blockSize,omitempty"`
	// Shareable lets several guests write the disk at once (no host cache).
	// +optional
	Shareable *bool `json:"shareable,omitempty"`
	// ErrorPolicy is what the guest sees on an I/O error: stop (the default), ignore, report
	// or enospace.
	// +kubebuilder:validation:Enum=stop;ignore;report;enospace
	// +optional
	ErrorPolicy *DiskErrorPolicy `json:"errorPolicy,omitempty"`
}

// DriverCache is QEMU's disk cache mode.
type DriverCache string

const (
	CacheNone         DriverCache = "none"
	CacheWriteThrough DriverCache = "writethrough"
	CacheWriteBack    DriverCache = "writeback"
)

// DriverIO is QEMU's disk I/O mode.
type DriverIO string

const (
	IONative  DriverIO = "native"
	IOThreads DriverIO = "threads"
	IODefault DriverIO = "default"
)

// DiskErrorPolicy is what happens to the guest on an I/O error.
type DiskErrorPolicy string

// BlockSize is the block size shown to the guest: custom, or the volume's own.
type BlockSize struct {
	// +optional
	Custom *CustomBlockSize `json:"custom,omitempty"`
	// +optional
	MatchVolume *FeatureState `json:"matchVolume,omitempty"`
}

// CustomBlockSize is a logical and physical block size in bytes.
type CustomBlockSize struct {
	// +optional
	Logical uint `json:"logical,omitempty"`
	// +optional
	Physical uint `json:"physical,omitempty"`
	// +optional
	DiscardGranularity *uint `json:"discardGranularity,omitempty"`
}

// DiskDevice is how a disk is presented to the guest: exactly one of its fields, or none for a disk.
type DiskDevice struct {
	// +optional
	Disk *DiskTarget `json:"disk,omitempty"`
	// LUN passes SCSI commands through to the volume (needs a block volume).
	// +optional
	LUN *LunTarget `json:"lun,omitempty"`
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty"`
}

// DiskBus is the bus a disk sits on.
//
// +kubebuilder:validation:Enum=virtio;sata;scsi;usb
type DiskBus string

const (
	DiskBusVirtio DiskBus = "virtio"
	DiskBusSATA   DiskBus = "sata"
	DiskBusSCSI   DiskBus = "scsi"
	DiskBusUSB    DiskBus = "usb"
)

// DiskTarget presents a volume as a hard disk.
type DiskTarget struct {
	// Bus defaults to sata, as KubeVirt does on x86_64.
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// +optional
	ReadOnly bool `json:"readonly,omitempty"`
	// PCIAddress places a virtio disk at this guest PCI address, e.g. 0000:81:01.0.
	// +optional
	PciAddress string `json:"pciAddress,omitempty"`
	// SolidState presents the disk to the guest as a solid-state drive (a rotation rate of
	// 1, non-rotational); SCSI and SATA disks only, as virtio-blk has no rotation rate.
	// +optional
	SolidState bool `json:"solidState,omitempty"`
}

// LunTarget presents a volume as a SCSI LUN.
type LunTarget struct {
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// +optional
	ReadOnly bool `json:"readonly,omitempty"`
	// +optional
	Reservation bool `json:"reservation,omitempty"`
}

// CDRomTarget presents a volume as a CD-ROM.
type CDRomTarget struct {
	// Bus defaults to sata.
	// +optional
	Bus DiskBus `json:"bus,omitempty"`
	// ReadOnly defaults to true.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty"`
	// Tray is open or closed (the default).
	// +kubebuilder:validation:Enum=open;closed
	// +optional
	Tray string `json:"tray,omitempty"`
}
