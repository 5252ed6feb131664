package handler

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// applyAgent reports a running instance's guest agent, as KubeVirt does: the AgentConnected
// condition while it is connected, and from its report the guest's OS (kept once the agent
// goes: the last report) and each interface's name inside the guest. While the first read
// of a new agent's report is under way nothing changes, so the connect and the report cost
// one status write together.
func applyAgent(vmi *v1.VirtualMachineInstance, before []v1.VirtualMachineInstanceNetworkInterface, view AgentView, now metav1.Time) {
	s := &vmi.Status
	if !view.Known || view.Connected && view.Reading && view.Report == nil {
		keepAgentNames(s.Interfaces, before)
		return
	}
	if !view.Connected {
		s.RemoveCondition(v1.VirtualMachineInstanceAgentConnected, "")
		return
	}
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue}, now)
	r := view.Report
	if r == nil {
		return // the agent did not answer: connected, but nothing to say
	}
	s.GuestOSInfo = r.OS
	for i := range s.Interfaces {
		iface := &s.Interfaces[i]
		for _, g := range r.Interfaces {
			if g.MAC != "" && strings.EqualFold(g.MAC, iface.MAC) {
				iface.InterfaceName, iface.InfoSource = g.Name, v1.InfoSourceDomainGuestAgent
			}
		}
	}
}

// keepAgentNames copies the interfaces' names in the guest from the status before, while the
// agent's state is not settled (interfaceStatus rebuilt the interfaces from the domain).
func keepAgentNames(now, before []v1.VirtualMachineInstanceNetworkInterface) {
	for i := range now {
		for _, b := range before {
			if b.Name == now[i].Name && b.MAC == now[i].MAC && b.InfoSource != "" {
				now[i].InterfaceName, now[i].InfoSource = b.InterfaceName, b.InfoSource
			}
		}
	}
}
