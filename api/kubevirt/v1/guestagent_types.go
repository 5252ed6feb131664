package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineInstanceAgentConnected is True while a guest agent (qemu-ga) in the guest has
// its virtio-serial port open.
const VirtualMachineInstanceAgentConnected VirtualMachineInstanceConditionType = "AgentConnected"

// InfoSource values of a status interface: what the address and names come from.
const (
	InfoSourceDomain           = "domain"
	InfoSourceDomainGuestAgent = "domain, guest-agent"
)

// VirtualMachineInstanceGuestOSInfo is the guest's operating system as its agent reports it
// (os-release and uname).
type VirtualMachineInstanceGuestOSInfo struct {
	Name          string `json:"name,omitempty"`
	KernelRelease string `json:"kernelRelease,omitempty"`
	Version       string `json:"version,omitempty"`
	PrettyName    string `json:"prettyName,omitempty"`
	VersionID     string `json:"versionId,omitempty"`
	KernelVersion string `json:"kernelVersion,omitempty"`
	Machine       string `json:"machine,omitempty"`
	ID            string `json:"id,omitempty"`
}

// VirtualMachineInstanceGuestAgentInfo is the answer of the guestosinfo subresource.
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta `json:",inline"`
	GAVersion       string                               `json:"guestAgentVersion,omitempty"`
	Hostname        string                               `json:"hostname,omitempty"`
	OS              VirtualMachineInstanceGuestOSInfo    `json:"os,omitempty"`
	Timezone        string                               `json:"timezone,omitempty"`
	UserList        []VirtualMachineInstanceGuestOSUser  `json:"userList,omitempty"`
	FSInfo          VirtualMachineInstanceFileSystemInfo `json:"fsInfo,omitempty"`
}

// VirtualMachineInstanceGuestOSUserList is the answer of the userlist subresource.
type VirtualMachineInstanceGuestOSUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceGuestOSUser `json:"items"`
}

// VirtualMachineInstanceGuestOSUser is a user logged in to the guest.
type VirtualMachineInstanceGuestOSUser struct {
	UserName string `json:"userName"`
	Domain   string `json:"domain,omitempty"`
	// LoginTime is seconds since the epoch.
	LoginTime float64 `json:"loginTime,omitempty"`
}

// VirtualMachineInstanceFileSystemInfo is the guest's mounted file systems.
type VirtualMachineInstanceFileSystemInfo struct {
	Filesystems []VirtualMachineInstanceFileSystem `json:"disks"`
}

// VirtualMachineInstanceFileSystemList is the answer of the filesystemlist subresource.
type VirtualMachineInstanceFileSystemList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceFileSystem `json:"items"`
}

// VirtualMachineInstanceFileSystem is one mounted file system of the guest.
type VirtualMachineInstanceFileSystem struct {
	DiskName       string                                 `json:"diskName"`
	MountPoint     string                                 `json:"mountPoint"`
	FileSystemType string                                 `json:"fileSystemType"`
	UsedBytes      int                                    `json:"usedBytes"`
	TotalBytes     int                                    `json:"totalBytes"`
	Disk           []VirtualMachineInstanceFileSystemDisk `json:"disk,omitempty"`
}

// VirtualMachineInstanceFileSystemDisk is a disk a file system is on.
type VirtualMachineInstanceFileSystemDisk struct {
	Serial  string `json:"serial,omitempty"`
	BusType string `json:"busType"`
}
