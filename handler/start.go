package handler

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
)

// Event reasons on instances, besides the failure reasons in status.go.
const (
	ReasonDefined = "Defined"
	ReasonStarted = "Started"
)

// createDomain writes the instance's files into its pod, converts it and defines and starts
// its domain. A spec the node cannot run gives a specError.
func (c *Controller) createDomain(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, lv Libvirt) (DomainStatus, error) {
	if err := requirePodClaims(vmi, pod); err != nil {
		return DomainStatus{}, err
	}
	root, err := os.OpenRoot(PrivateDir(c.opts.KubeletRoot, pod.UID))
	if err != nil {
		return DomainStatus{}, fmt.Errorf("the launcher pod's private directory: %w", err)
	}
	defer root.Close()
	env, err := buildEnvironment(vmi, root, c.opts.DomainType)
	if err != nil {
		return DomainStatus{}, err
	}
	dom, err := domain.Convert(vmi, env)
	if err != nil {
		return DomainStatus{}, specError{err}
	}
	domXML, err := domain.Marshal(dom)
	if err != nil {
		return DomainStatus{}, specError{err}
	}
	if err := writeFiles(vmi, root, podSecrets(c.opts.KubeletRoot, pod)); err != nil {
		return DomainStatus{}, err
	}
	if err := lv.DefineDomain(domXML); err != nil {
		return DomainStatus{}, fmt.Errorf("defining the domain: %w", err)
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonDefined, "Defined domain %s (type %s)", dom.Name, dom.Type)
	return c.startDomain(vmi, lv)
}

// startDomain starts the defined domain and returns its state afterwards.
func (c *Controller) startDomain(vmi *v1.VirtualMachineInstance, lv Libvirt) (DomainStatus, error) {
	name := DomainName(vmi)
	if err := lv.StartDomain(name); err != nil {
		return DomainStatus{}, fmt.Errorf("starting the domain: %w", err)
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonStarted, "Started domain %s", name)
	return lv.DomainState(name)
}

// domainMACs maps each tap device of the domain to its NIC's MAC address, as libvirt chose it
// when the spec named none.
func domainMACs(lv Libvirt, name string) (map[string]string, error) {
	raw, err := lv.DomainXML(name)
	if err != nil {
		return nil, fmt.Errorf("reading the domain XML: %w", err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("parsing the domain XML: %w", err)
	}
	macs := map[string]string{}
	if d.Devices == nil {
		return macs, nil
	}
	for _, iface := range d.Devices.Interfaces {
		if iface.Target != nil && iface.Target.Dev != "" && iface.MAC != nil && iface.MAC.Address != "" {
			macs[iface.Target.Dev] = iface.MAC.Address
		}
	}
	return macs, nil
}
