package handler

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/handler/kvm"
	"github.com/vmctl/vmctl/handler/podnet"
	"github.com/vmctl/vmctl/launcher/layout"
)

// Event reasons on instances, besides the failure reasons in status.go.
const (
	ReasonDefined = "Defined"
	ReasonStarted = "Started"
)

// createDomain plumbs the pod network, writes the instance's files into its pod, converts it
// and defines and starts its domain. A spec the node cannot run gives a specError; a launcher
// not yet serving its guest's network gives errNetworkNotReady.
func (c *Controller) createDomain(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, lv Libvirt) (DomainStatus, error) {
	if err := requirePodClaims(vmi, pod); err != nil {
		return DomainStatus{}, err
	}
	root, err := os.OpenRoot(PrivateDir(c.opts.KubeletRoot, pod.UID))
	if err != nil {
		return DomainStatus{}, fmt.Errorf("the launcher pod's private directory: %w", err)
	}
	defer root.Close()
	if err := c.plumbNetwork(vmi, pod, lv, root); err != nil {
		return DomainStatus{}, err
	}
	dom, err := c.convert(vmi, pod, root)
	if err != nil {
		return DomainStatus{}, err
	}
	domXML, err := domain.Marshal(dom)
	if err != nil {
		return DomainStatus{}, specError{err}
	}
	sidecars, err := c.connectHooks(vmi, pod)
	if err != nil {
		return DomainStatus{}, err
	}
	defer sidecars.close()
	domXML, hooked, err := sidecars.onDefineDomain(DomainName(vmi), domXML)
	if err != nil {
		return DomainStatus{}, err
	}
	if hooked != nil {
		dom = hooked
	}
	if err := c.writeFiles(vmi, pod, root, dom, lv, sidecars); err != nil {
		return DomainStatus{}, err
	}
	seedCapabilities(root, c.opts.Capabilities.ForDomain(dom))
	if err := lv.DefineDomain(domXML); err != nil {
		return DomainStatus{}, fmt.Errorf("defining the domain: %w", err)
	}
	// One event says both when the start follows (KubeVirt records two): events are API
	// writes, and every VM start pays for them.
	st, err := c.startDomain(vmi, lv, fmt.Sprintf(", defined with type %s", dom.Type))
	if err != nil {
		c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonDefined, "Defined domain %s (type %s)", dom.Name, dom.Type)
	}
	return st, err
}

// convert is the instance's domain as this pod runs it.
func (c *Controller) convert(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, root *os.Root) (*libvirtxml.Domain, error) {
	domainType, err := c.domainType(pod)
	if err != nil {
		return nil, err
	}
	env, err := buildEnvironment(vmi, root, domainType, podBlockDevices(pod))
	if err != nil {
		return nil, err
	}
	dom, err := domain.Convert(vmi, env)
	if err != nil {
		return nil, specError{err}
	}
	return dom, nil
}

// writeFiles prepares the disks the node provides and writes the instance's files into its pod
// (writeFiles), with the addresses of its tagged devices for a config drive. dom is the
// instance's converted domain; nil has it converted when the addresses are needed (a
// migration's target converts nothing else). The hook sidecars may rewrite the cloud-init data.
func (c *Controller) writeFiles(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, root *os.Root, dom *libvirtxml.Domain, lv Libvirt, sidecars *hookCalls) error {
	var devices []DeviceData
	if needsDeviceMetadata(vmi) {
		var err error
		if dom == nil {
			if dom, err = c.convert(vmi, pod, root); err != nil {
				return err
			}
		}
		if devices, err = deviceMetadata(vmi, dom, lv); err != nil {
			return err
		}
	}
	if err := prepareNodeDisks(vmi, podBlockDevices(pod), procRoot(lv.PeerPID())); err != nil {
		return err
	}
	return writeFiles(vmi, root, podSecrets(c.opts.KubeletRoot, pod), podConfigVolumes(c.opts.KubeletRoot, pod), devices, sidecars)
}

// domainType is kvm when the launcher pod holds /dev/kvm from the device plugin, else qemu
// (TCG) where this node allows emulation.
func (c *Controller) domainType(pod *corev1.Pod) (string, error) {
	for _, ctr := range pod.Spec.Containers {
		if _, ok := ctr.Resources.Limits[layout.KVMResource]; ok {
			return kvm.TypeKVM, nil
		}
	}
	if !c.opts.AllowEmulation {
		return "", invalidSpec("the launcher pod has no /dev/kvm (it requests no %s: virt-controller runs with --use-emulation) and this node does not allow emulation (virt-handler --allow-emulation)", layout.KVMResource)
	}
	return kvm.TypeQEMU, nil
}

// errNetworkNotReady means the launcher does not serve its guest's DHCP yet: the domain waits,
// so the guest's first request is answered.
var errNetworkNotReady = errors.New("the launcher is not serving the guest's network yet")

// plumbNetwork makes the bridge or masquerade binding in the pod's network namespace (the launcher's
// user may not), found through the launcher's libvirtd: the process behind the socket.
func (c *Controller) plumbNetwork(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, lv Libvirt, root *os.Root) error {
	if !vmi.Spec.HasPodInterface() {
		return nil
	}
	// The launcher says it serves DHCP only after it saw the bridge: then it is plumbed.
	if ready, err := regularFile(root, layout.NetworkReadyRel); err != nil || ready {
		return err
	}
	binding := podnet.Binding{Bridge: vmi.Spec.BridgeBound(), Ports: forwardedPorts(vmi), Save: func(l layout.GuestLease) error {
		return createOnce(root, layout.GuestLeaseRel, func(f *os.File) error { return json.NewEncoder(f).Encode(l) })
	}}
	if err := c.opts.PlumbNetwork(lv.PeerPID(), pod.UID, binding); err != nil {
		return fmt.Errorf("setting up the pod network: %w", err)
	}
	if ready, err := regularFile(root, layout.NetworkReadyRel); err != nil || ready {
		return err
	}
	return errNetworkNotReady
}

// startDomain starts the defined domain and returns its state afterwards; detail ends the
// Started event's message.
func (c *Controller) startDomain(vmi *v1.VirtualMachineInstance, lv Libvirt, detail string) (DomainStatus, error) {
	name := DomainName(vmi)
	// startStrategy Paused: the guest waits for virtctl unpause; libvirt reports the domain
	// paused by the user, so the instance shows the Paused condition meanwhile.
	paused := vmi.Spec.StartStrategy != nil && *vmi.Spec.StartStrategy == v1.StartStrategyPaused
	if err := lv.StartDomain(name, paused); err != nil {
		return DomainStatus{}, fmt.Errorf("starting the domain: %w", err)
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonStarted, "Started domain %s%s", name, detail)
	return lv.DomainState(name)
}

// liveDomain is the running domain's definition as libvirt completed it.
func liveDomain(lv Libvirt, name string) (*libvirtxml.Domain, error) {
	raw, err := lv.DomainXML(name)
	if err != nil {
		return nil, fmt.Errorf("reading the domain XML: %w", err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("parsing the domain XML: %w", err)
	}
	return &d, nil
}
