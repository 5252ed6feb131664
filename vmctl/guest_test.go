package vmctl

import (
	"net/netip"
	"testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestPodNetworkAddress(t *testing.T) {
	running := func(networks []v1.Network, ifaces ...v1.VirtualMachineInstanceNetworkInterface) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{}
		vmi.Name, vmi.Namespace = "testvm-pod", "apps"
		vmi.Spec.Networks = networks
		vmi.Status.Phase = v1.Running
		vmi.Status.Interfaces = ifaces
		return vmi
	}
	podNet := []v1.Network{
		{Name: "storage", NetworkSource: v1.NetworkSource{Multus: &v1.MultusNetwork{NetworkName: "storage"}}},
		{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}},
	}
	pending := running(podNet)
	pending.Status.Phase = ""
	tests := []struct {
		name    string
		vmi     *v1.VirtualMachineInstance
		want    string
		wantErr bool
	}{
		{name: "the pod network's interface", vmi: running(podNet,
			v1.VirtualMachineInstanceNetworkInterface{Name: "storage", IP: "192.168.7.2"},
			v1.VirtualMachineInstanceNetworkInterface{Name: "default", IP: "10.244.0.17"}), want: "10.244.0.17"},
		{name: "IPv6", vmi: running(podNet, v1.VirtualMachineInstanceNetworkInterface{Name: "default", IP: "fd00::11"}), want: "fd00::11"},
		{name: "no pod network: the first address", vmi: running(nil,
			v1.VirtualMachineInstanceNetworkInterface{Name: "a"},
			v1.VirtualMachineInstanceNetworkInterface{Name: "b", IP: "10.244.0.9"}), want: "10.244.0.9"},
		{name: "no address yet", vmi: running(podNet, v1.VirtualMachineInstanceNetworkInterface{Name: "default"}), wantErr: true},
		{name: "not running", vmi: pending, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podNetworkAddress(tt.vmi)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != netip.MustParseAddr(tt.want) {
				t.Errorf("address = %s, want %s", got, tt.want)
			}
		})
	}
}
