//go:build e2e

package e2e

import (
	"context"
	"regexp"
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

// TestTheGuestHasAnEmulatedTPM: `devices.tpm: {}`, which KubeVirt's Windows examples and its
// windows preference ask for, gives the guest a TPM 2.0 (swtpm, started by libvirt in the
// launcher pod) that answers it: the guest reads PCR 0 from it. A live migration carries the
// TPM's state to the other node: the guest reads the same PCR there.
func TestTheGuestHasAnEmulatedTPM(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	spec := framework.TestGuestSpec("tpm")
	spec.Domain.Devices.TPM = &v1.TPMDevice{}
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "tpm"}, Spec: spec})
	before := f.WaitVMIPhase("tpm", v1.Running, bootTimeout)

	pod := f.LauncherPod(before)
	pcrLine := regexp.MustCompile(`tpm0 TPM 2\.0 pcr-sha256/0=[0-9A-Fa-f]{64}`)
	f.Eventually(3*time.Minute, "the guest to read PCR 0 from its TPM at boot", func(context.Context) (bool, error) {
		return pcrLine.MatchString(f.Kubectl("logs", pod.Name, "-c", framework.GuestConsoleLog)), nil
	})
	if qemu := f.QEMUCommandLine("tpm"); !strings.Contains(qemu, `"driver":"tpm-tis"`) {
		t.Errorf("QEMU has no tpm-tis device: %s", qemu)
	}
	pcr := guestCGI(t, f, before, "tpm")
	if !regexp.MustCompile(`^[0-9A-Fa-f]{64}$`).MatchString(pcr) {
		t.Fatalf("the guest reads PCR 0 as %q", pcr)
	}

	after := migrate(t, f, "move-tpm", "tpm")
	if after.Status.NodeName == before.Status.NodeName {
		t.Fatalf("instance still on %s after its migration", after.Status.NodeName)
	}
	if got := guestCGI(t, f, after, "tpm"); got != pcr {
		t.Fatalf("after the migration the guest reads PCR 0 as %q, was %q: the TPM's state stayed behind", got, pcr)
	}
}
