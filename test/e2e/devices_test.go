//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestUSBControllerOnlyForUSBInputs: as in KubeVirt, a guest has a USB controller only for a
// device on the USB bus. A tablet on the usb bus runs on QEMU's xHCI controller; a guest with
// no USB device, or with a virtio tablet, has no USB controller at all.
func TestUSBControllerOnlyForUSBInputs(t *testing.T) {
	f := framework.New(t)
	cases := map[string]struct {
		inputs      []v1.Input
		has, hasNot []string // QEMU devices on its command line
	}{
		"no-input":      {nil, nil, []string{"qemu-xhci", "usb-tablet"}},
		"usb-tablet":    {[]v1.Input{{Name: "tablet", Type: "tablet", Bus: "usb"}}, []string{`"driver":"qemu-xhci"`, `"driver":"usb-tablet"`}, nil},
		"virtio-tablet": {[]v1.Input{{Name: "tablet", Type: "tablet", Bus: "virtio"}}, []string{`"driver":"virtio-tablet-pci"`}, []string{"qemu-xhci"}},
	}
	for name, c := range cases {
		spec := framework.TestGuestSpec(name)
		spec.Domain.Devices.Inputs = c.inputs
		f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	for name, c := range cases {
		f.WaitVMIPhase(name, v1.Running, 3*time.Minute)
		qemu := f.QEMUCommandLine(name)
		if qemu == "" {
			t.Fatalf("%s: Running, but no QEMU runs its domain", name)
		}
		for _, dev := range c.has {
			if !strings.Contains(qemu, dev) {
				t.Errorf("%s: QEMU has no %s: %s", name, dev, qemu)
			}
		}
		for _, dev := range c.hasNot {
			if strings.Contains(qemu, dev) {
				t.Errorf("%s: QEMU has %s: %s", name, dev, qemu)
			}
		}
	}
}
