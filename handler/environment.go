package handler

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/handler/podnet"
	"github.com/vmctl/vmctl/launcher/layout"
)

// specError is an instance spec this node cannot run, whatever it retries: the instance fails.
type specError struct{ err error }

func (e specError) Error() string { return e.err.Error() }
func (e specError) Unwrap() error { return e.err }

func invalidSpec(format string, args ...any) error { return specError{fmt.Errorf(format, args...)} }

// isSpecError reports an error that makes the instance Failed rather than retried.
func isSpecError(err error) bool {
	var se specError
	return errors.As(err, &se)
}

// buildEnvironment resolves where each of vmi's sources lives inside its launcher pod, as
// domain.Convert needs them. It checks the files the launcher's init containers copied through
// root, the handler's view of the pod's private directory; the files the handler writes itself
// (cloud-init ISO, emptyDisk) are only named here. block are the volumes the pod has as
// block devices (podBlockDevices).
func buildEnvironment(vmi *v1.VirtualMachineInstance, root *os.Root, domainType string, block map[string]bool) (domain.Environment, error) {
	env := domain.Environment{
		DomainType:       domainType,
		Volumes:          map[string]domain.HostDisk{},
		SerialLogPath:    layout.InPod(layout.ConsoleLogRel),
		SerialSocketPath: layout.InPod(layout.SerialSocketRel),
		VNCSocketPath:    layout.InPod(layout.VNCSocketRel),
		AgentSocketPath:  layout.InPod(layout.AgentSocketRel),
		NVRAMPath:        nvramPath(vmi),
	}
	if vmi.Spec.DownwardMetricsPort() {
		// The launcher answers there (--downward-metrics-port).
		env.DownwardMetricsSocketPath = layout.InPod(layout.DownwardMetricsSocketRel)
	}
	shared := vmi.Spec.SharedVolumes()
	for _, vol := range vmi.Spec.Volumes {
		if msgs := validation.IsDNS1123Label(vol.Name); len(msgs) > 0 {
			return env, invalidSpec("spec.volumes: name %q: %s", vol.Name, strings.Join(msgs, "; "))
		}
		if shared[vol.Name] {
			if block[vol.Name] {
				return env, invalidSpec("spec.domain.devices.filesystems: volume %q: its claim is block-mode: virtiofs shares a file system (volumeMode: Filesystem)", vol.Name)
			}
			// Its virtiofsd container mounts it; the guest sees no disk of it.
			if env.VirtiofsSockets == nil {
				env.VirtiofsSockets = map[string]string{}
			}
			env.VirtiofsSockets[vol.Name] = layout.VirtiofsSocket(vol.Name)
			continue
		}
		switch {
		case vol.ContainerDisk != nil:
			disk, err := containerDisk(root, vol.Name)
			if err != nil {
				return env, err
			}
			env.Volumes[vol.Name] = disk
		case vol.CloudInitNoCloud != nil:
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(diskRel(vol.Name, layout.NoCloudISOFile)), Format: "raw"}
		case vol.CloudInitConfigDrive != nil:
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(diskRel(vol.Name, layout.ConfigDriveISOFile)), Format: "raw"}
		case vol.EmptyDisk != nil:
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(diskRel(vol.Name, layout.RawDiskFile)), Format: "raw"}
		case isConfigVolume(vol):
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(diskRel(vol.Name, layout.ConfigISOFile)), Format: "raw"}
		case vol.HostDisk != nil:
			env.Volumes[vol.Name] = hostDiskImage(vol)
		case vol.DownwardMetrics != nil:
			// The launcher made it before libvirtd was up (--downward-metrics-disk).
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(layout.DownwardMetricsDiskRel), Format: "raw"}
		case block[vol.Name]:
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.BlockDevice(vol.Name), Format: "raw", Block: true}
		case vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil:
			// The pod mounts the claim's file system there; the handler cannot see into it.
			env.Volumes[vol.Name] = domain.HostDisk{Path: layout.InPod(diskRel(vol.Name, layout.PVCDiskFile)), Format: "raw"}
		}
	}
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		c := fw.KernelBoot.Container
		if c.KernelPath != "" {
			if err := requireFile(root, layout.KernelRel); err != nil {
				return env, err
			}
			env.KernelPath = layout.InPod(layout.KernelRel)
		}
		if c.InitrdPath != "" {
			if err := requireFile(root, layout.InitrdRel); err != nil {
				return env, err
			}
			env.InitrdPath = layout.InPod(layout.InitrdRel)
		}
	}
	ifaces, err := attachments(vmi)
	if err != nil {
		return env, err
	}
	lease, err := guestLease(root)
	if err != nil {
		return env, err
	}
	// A bridge-bound guest answers with the pod's MAC, as the pod's neighbours know it. A
	// masquerade-bound one gets a MAC of its instance rather than libvirt's random one, so a
	// migration's target knows it too (for the config drive's device metadata).
	mac := lease.MAC
	if mac == "" {
		mac = instanceMAC(vmi)
	}
	env.Interfaces = map[string]domain.Attachment{}
	for name, tap := range ifaces {
		env.Interfaces[name] = domain.Attachment{Mode: domain.NetworkTap, TapDevice: tap, MAC: mac}
	}
	return env, nil
}

// requirePodClaims checks that the launcher pod mounts each claim the instance's volumes name:
// the handler cannot see into a claim, and without it QEMU could only fail to start.
func requirePodClaims(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) error {
	for _, vol := range vmi.Spec.Volumes {
		pvc, ok := vol.Claim()
		if !ok {
			continue
		}
		claim := pvc.ClaimName
		if !slices.ContainsFunc(pod.Spec.Volumes, func(pv corev1.Volume) bool {
			return pv.PersistentVolumeClaim != nil && pv.PersistentVolumeClaim.ClaimName == claim
		}) {
			return invalidSpec("spec.volumes: persistentVolumeClaim %q: the launcher pod does not mount claim %q", vol.Name, claim)
		}
	}
	return nil
}

// attachments maps each interface to the tap device virt-handler wired for it (podnet). It
// implements masquerade, KubeVirt's default binding, for one interface: it is the binding of
// interfaces that name none.
func attachments(vmi *v1.VirtualMachineInstance) (map[string]string, error) {
	out := map[string]string{}
	for i, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if len(out) > 0 {
			return nil, invalidSpec("spec.domain.devices.interfaces[%d] (%s): only one pod network interface is supported", i, iface.Name)
		}
		out[iface.Name] = layout.TapDevice
	}
	return out, nil
}

// nvramPath is where the guest's EFI variables live: in the VM's state claim when they are to
// outlive the instance (libvirt copies OVMF's template there only when no store exists yet).
func nvramPath(vmi *v1.VirtualMachineInstance) string {
	if vmi.Spec.PersistentEFI() {
		return layout.PersistentNVRAM
	}
	return layout.InPod(layout.NVRAMRel)
}

// instanceMAC is a MAC in QEMU's range (52:54:00, as libvirt gives) fixed by the instance's UID.
func instanceMAC(vmi *v1.VirtualMachineInstance) string {
	sum := sha256.Sum256([]byte(vmi.UID))
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", sum[0], sum[1], sum[2])
}

// containerDisk is the qcow2 overlay the volume's holder sidecar wrote over the image
// (launcher/containerdisk), or the reason it could not, which fails the instance.
func containerDisk(root *os.Root, volume string) (domain.HostDisk, error) {
	msg, err := root.ReadFile(diskRel(volume, layout.DiskErrorFile))
	if err == nil {
		return domain.HostDisk{}, invalidSpec("spec.volumes: containerDisk %q: %s", volume, strings.TrimSpace(string(msg)))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return domain.HostDisk{}, err
	}
	rel := diskRel(volume, layout.Qcow2DiskFile)
	ok, err := regularFile(root, rel)
	if err != nil {
		return domain.HostDisk{}, err
	}
	if !ok {
		return domain.HostDisk{}, fmt.Errorf("containerDisk %q: its sidecar has not written %s yet", volume, rel)
	}
	return domain.HostDisk{Path: layout.InPod(rel), Format: "qcow2"}, nil
}

// requireFile fails unless rel is a regular file (the init containers ran before the pod's
// main container, so a missing file is the pod's fault; the sync retries).
func requireFile(root *os.Root, rel string) error {
	ok, err := regularFile(root, rel)
	if err == nil && !ok {
		err = fmt.Errorf("%s is missing in the launcher pod", rel)
	}
	return err
}

// regularFile reports whether rel is a regular file; anything else there is an error.
func regularFile(root *os.Root, rel string) (bool, error) {
	fi, err := regularFileInfo(root, rel)
	return fi != nil, err
}

// regularFileInfo is regularFile with the file's information: nil when it does not exist.
func regularFileInfo(root *os.Root, rel string) (fs.FileInfo, error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s in the launcher pod is not a regular file (%s)", rel, fi.Mode().Type())
	}
	return fi, nil
}

// forwardedPorts are the ports the masquerade interface lists (KubeVirt forwards only those
// when it lists any). Protocol defaults to TCP.
func forwardedPorts(vmi *v1.VirtualMachineInstance) []podnet.Port {
	var out []podnet.Port
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if iface.Masquerade == nil {
			continue
		}
		for _, p := range iface.Ports {
			proto := strings.ToUpper(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			out = append(out, podnet.Port{Protocol: proto, Port: uint16(p.Port)})
		}
	}
	return out
}

// guestLease is the bridge binding's lease virt-handler kept in the pod; none for masquerade.
func guestLease(root *os.Root) (layout.GuestLease, error) {
	var l layout.GuestLease
	data, err := root.ReadFile(layout.GuestLeaseRel)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	return l, json.Unmarshal(data, &l)
}
