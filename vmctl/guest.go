package vmctl

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// GuestAddress is where the clone's guest is reached on the pod network now (--forward's
// target): the address its running instance reports for the interface on the pod network.
func (c *Controller) GuestAddress() (netip.Addr, error) {
	if c.vmiLister == nil {
		return netip.Addr{}, fmt.Errorf("vmctl does not watch its clone's instance")
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(c.namespace).Get(c.cloneName)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("instance %s/%s: %w", c.namespace, c.cloneName, err)
	}
	if !ownedByVM(vmi, c.Clone()) {
		return netip.Addr{}, fmt.Errorf("instance %s/%s is not this pod's clone's", c.namespace, c.cloneName)
	}
	return podNetworkAddress(vmi)
}

// ownedByVM says whether vmi is the instance of the VM whose UID is uid.
func ownedByVM(vmi *v1.VirtualMachineInstance, uid types.UID) bool {
	for _, ref := range vmi.OwnerReferences {
		if ref.Kind == "VirtualMachine" && ref.UID == uid {
			return true
		}
	}
	return false
}

// podNetworkAddress is the address of a running instance's interface on the pod network (with
// masquerade, the launcher pod's address, which the launcher forwards to the guest), else of its
// first interface that has one.
func podNetworkAddress(vmi *v1.VirtualMachineInstance) (netip.Addr, error) {
	if vmi.Status.Phase != v1.Running {
		return netip.Addr{}, fmt.Errorf("instance %s/%s is %s, not Running", vmi.Namespace, vmi.Name, phaseOrPending(vmi.Status.Phase))
	}
	podNetwork := ""
	for _, n := range vmi.Spec.Networks {
		if n.Pod != nil {
			podNetwork = n.Name
		}
	}
	var first netip.Addr
	for _, iface := range vmi.Status.Interfaces {
		addr, err := netip.ParseAddr(iface.IP)
		if err != nil {
			continue
		}
		if iface.Name == podNetwork {
			return addr, nil
		}
		if !first.IsValid() {
			first = addr
		}
	}
	if !first.IsValid() {
		return first, fmt.Errorf("instance %s/%s reports no address yet", vmi.Namespace, vmi.Name)
	}
	return first, nil
}

func phaseOrPending(p v1.VirtualMachineInstancePhase) v1.VirtualMachineInstancePhase {
	if p == "" {
		return v1.Pending
	}
	return p
}
