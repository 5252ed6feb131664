//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestBridgeBindingGivesTheGuestThePodIP: with KubeVirt's bridge binding the guest itself
// holds the pod's address (its web page says which address it has), where masquerade puts
// it behind NAT on 10.0.2.2.
func TestBridgeBindingGivesTheGuestThePodIP(t *testing.T) {
	f := framework.New(t)
	spec := framework.TestGuestSpec("bridged")
	spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}
	vmi := f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "bridged"}, Spec: spec})
	vmi = f.WaitVMIPhase(vmi.Name, v1.Running, 3*time.Minute)
	pod := f.LauncherPod(vmi)
	// The guest's init starts httpd on 80, then on 8080, then prints its marker.
	f.WaitConsole(f.FollowConsole(pod), framework.GuestMarker, bootTimeout)
	url := fmt.Sprintf("http://%s:80/", pod.Status.PodIP)
	var page string
	f.Eventually(2*time.Minute, "the guest to answer on "+url, func(ctx context.Context) (bool, error) {
		body, err := get(ctx, url)
		page = body
		return err == nil, nil
	})
	if want := "address=" + pod.Status.PodIP + "/"; !strings.Contains(page, want) {
		t.Errorf("the guest's page does not say %q:\n%s", want, page)
	}
	// Nothing filters a bridged guest's ports: 8080 answers too (TestMasqueradePorts... relies
	// on the guest serving it).
	if _, err := get(f.Context(), fmt.Sprintf("http://%s:8080/", pod.Status.PodIP)); err != nil {
		t.Errorf("the guest's port 8080: %v", err)
	}
	if len(vmi.Status.Interfaces) != 1 || vmi.Status.Interfaces[0].IP != pod.Status.PodIP {
		t.Errorf("status interfaces %+v, want the pod IP %s", vmi.Status.Interfaces, pod.Status.PodIP)
	}
}

// TestMasqueradePortsLimitWhatReachesTheGuest: an interface that lists ports forwards those
// and nothing else; the test guest serves the same page on 80 and 8080.
func TestMasqueradePortsLimitWhatReachesTheGuest(t *testing.T) {
	f := framework.New(t)
	spec := framework.TestGuestSpec("ported")
	spec.Domain.Devices.Interfaces[0].Ports = []v1.Port{{Name: "http", Port: 80}}
	vmi := f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "ported"}, Spec: spec})
	vmi = f.WaitVMIPhase(vmi.Name, v1.Running, 3*time.Minute)
	pod := f.LauncherPod(vmi)
	f.WaitConsole(f.FollowConsole(pod), framework.GuestMarker, bootTimeout) // 8080 serves in the guest
	ip := pod.Status.PodIP
	f.Eventually(2*time.Minute, "the guest to answer on port 80", func(ctx context.Context) (bool, error) {
		_, err := get(ctx, fmt.Sprintf("http://%s:80/", ip))
		return err == nil, nil
	})
	if _, err := get(f.Context(), fmt.Sprintf("http://%s:8080/", ip)); err == nil {
		t.Errorf("port 8080, not listed, reached the guest")
	}
}

// TestDHCPOptionsReachTheGuest: an interface's dhcpOptions (KubeVirt's) are in the lease the
// guest gets, on both bindings: boot file, TFTP server, NTP servers and private options.
func TestDHCPOptionsReachTheGuest(t *testing.T) {
	f := framework.New(t)
	options := &v1.DHCPOptions{BootFileName: "pxelinux.0", TFTPServerName: "tftp.example", NTPServers: []string{"10.96.0.123", "10.96.0.124"},
		PrivateOptions: []v1.DHCPPrivateOptions{{Option: 240, Value: "extra"}}}
	for name, binding := range map[string]v1.InterfaceBindingMethod{
		"masq":   {Masquerade: &v1.InterfaceMasquerade{}},
		"bridge": {Bridge: &v1.InterfaceBridge{}},
	} {
		spec := framework.TestGuestSpec(name)
		spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = binding
		spec.Domain.Devices.Interfaces[0].DHCPOptions = options
		f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	// udhcpc passes an option it has no name for as opt<code>=<hex>: "extra" is 6578747261.
	want := "dhcp options bootfile=pxelinux.0 tftp=tftp.example ntpsrv=10.96.0.123 10.96.0.124 opt240=6578747261"
	for _, name := range []string{"masq", "bridge"} {
		pod := f.LauncherPod(f.WaitVMIPhase(name, v1.Running, 3*time.Minute))
		f.Eventually(2*time.Minute, name+": the guest's lease to have the options", func(context.Context) (bool, error) {
			return strings.Contains(f.Kubectl("logs", pod.Name, "-c", framework.GuestConsoleLog), want), nil
		})
	}
}
