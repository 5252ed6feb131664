package v1

// Interface is a guest network interface; it attaches to the network of the same name.
type Interface struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Model is the emulated NIC: virtio (the default), e1000, e1000e, igb, ne2k_pci, pcnet
	// or rtl8139.
	// +kubebuilder:validation:Enum=virtio;e1000;e1000e;igb;ne2k_pci;pcnet;rtl8139
	// +optional
	Model                  string `json:"model,omitempty"`
	InterfaceBindingMethod `json:",inline"`
	// Binding names a network binding plugin; none is installed here.
	// +optional
	Binding *PluginBinding `json:"binding,omitempty"`
	// Ports limits which ports a masquerade interface forwards to the guest; empty
	// forwards all.
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// MacAddress is the guest's MAC, e.g. de:ad:00:00:be:af or DE-AD-00-00-BE-AF.
	// +optional
	MacAddress string `json:"macAddress,omitempty"`
	// BootOrder lets firmware boot from this interface (PXE): lower boots first.
	// +kubebuilder:validation:Minimum=1
	// +optional
	BootOrder *uint `json:"bootOrder,omitempty"`
	// PciAddress places the NIC at this guest PCI address, e.g. 0000:81:01.0.
	// +optional
	PciAddress string `json:"pciAddress,omitempty"`
	// DHCPOptions are extra options the in-pod DHCP server hands a bridge interface.
	// +optional
	DHCPOptions *DHCPOptions `json:"dhcpOptions,omitempty"`
	// Tag is shown to the guest in the config drive's device metadata.
	// +optional
	Tag string `json:"tag,omitempty"`
	// ACPIIndex names the NIC stably in the guest (e.g. eno<index>).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16383
	// +optional
	ACPIIndex int `json:"acpiIndex,omitempty"`
	// State is up (empty), down or absent.
	// +kubebuilder:validation:Enum=up;down;absent
	// +optional
	State string `json:"state,omitempty"`
}

// InterfaceBindingMethod is how the interface connects to its network: one of its fields.
type InterfaceBindingMethod struct {
	// Bridge gives the guest the pod's IP and MAC (by DHCP) on an in-pod bridge.
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty"`
	// Slirp is QEMU's user networking; removed in KubeVirt 1.3, refused.
	// +optional
	Slirp *InterfaceSlirp `json:"slirp,omitempty"`
	// Masquerade puts the guest behind NAT on the pod IP.
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty"`
	// SRIOV passes an SR-IOV virtual function through; needs SR-IOV and Multus.
	// +optional
	SRIOV *InterfaceSRIOV `json:"sriov,omitempty"`
	// Macvtap is removed in KubeVirt 1.3, refused.
	// +optional
	Macvtap *InterfaceMacvtap `json:"macvtap,omitempty"`
	// Passt is removed in KubeVirt 1.3, refused.
	// +optional
	Passt *InterfacePasst `json:"passt,omitempty"`
	// PasstBinding connects through passt; needs the passt binding plugin.
	// +optional
	PasstBinding *InterfacePasstBinding `json:"passtBinding,omitempty"`
}

// InterfaceBridge gives the guest the pod's IP and MAC on an in-pod bridge.
type InterfaceBridge struct{}

// InterfaceSlirp is QEMU user networking.
type InterfaceSlirp struct{}

// InterfaceMasquerade puts the guest behind NAT on the pod IP.
type InterfaceMasquerade struct{}

// InterfaceSRIOV passes an SR-IOV virtual function through.
type InterfaceSRIOV struct{}

// InterfaceMacvtap extends a node network through macvtap.
type InterfaceMacvtap struct{}

// InterfacePasst is the old passt binding.
type InterfacePasst struct{}

// InterfacePasstBinding is the passt binding.
type InterfacePasstBinding struct{}

// PluginBinding names a network binding plugin.
type PluginBinding struct {
	Name string `json:"name"`
}

// Port is a port a masquerade interface forwards to the guest.
type Port struct {
	// +optional
	Name string `json:"name,omitempty"`
	// Protocol is TCP (the default) or UDP.
	// +kubebuilder:validation:Enum=TCP;UDP
	// +optional
	Protocol string `json:"protocol,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
}

// DHCPOptions are extra DHCP options for a bridge interface.
type DHCPOptions struct {
	// BootFileName is DHCP option 67.
	// +optional
	BootFileName string `json:"bootFileName,omitempty"`
	// TFTPServerName is DHCP option 66.
	// +optional
	TFTPServerName string `json:"tftpServerName,omitempty"`
	// NTPServers is DHCP option 42.
	// +optional
	NTPServers []string `json:"ntpServers,omitempty"`
	// PrivateOptions are options 224-254.
	// +optional
	PrivateOptions []DHCPPrivateOptions `json:"privateOptions,omitempty"`
}

// DHCPPrivateOptions is one private-use DHCP option.
type DHCPPrivateOptions struct {
	// +kubebuilder:validation:Minimum=224
	// +kubebuilder:validation:Maximum=254
	Option int    `json:"option"`
	Value  string `json:"value"`
}
