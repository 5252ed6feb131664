//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// klogLine is how the launcher's own log lines start (I1125 13:04:52.129769 ...).
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d`)

// TestContainerDisksBootByFirmware boots the test guest from a raw disk image in a
// containerDisk, by SeaBIOS (the default) and by UEFI (OVMF), as KubeVirt users boot their
// cloud images. The image is served in place, not copied: the pod holds a small overlay. The
// guest's console is the guest-console-log container's log, and only there. With secure boot
// (KubeVirt's default for EFI), the firmware refuses the image's unsigned GRUB.
func TestContainerDisksBootByFirmware(t *testing.T) {
	f := framework.New(t)
	cases := map[string]struct {
		bootloader *v1.Bootloader
		memory     string // GRUB on EFI loads the kernel into a heap of a quarter of RAM
		console    string // what the guest's console shows
	}{
		"bios":       {nil, "128Mi", framework.GuestMarker},
		"efi":        {&v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}, "256Mi", framework.GuestMarker},
		"secureboot": {&v1.Bootloader{EFI: &v1.EFI{}}, "256Mi", "Access Denied"},
	}
	for name, c := range cases {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "boot-" + name},
			Spec: testguest.DiskSpec(resource.MustParse(c.memory), c.bootloader)}
		if _, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(), vmi, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", vmi.Name, err)
		}
	}
	for name, c := range cases {
		vmi := f.WaitVMIPhase("boot-"+name, v1.Running, 3*time.Minute)
		pod := f.LauncherPod(vmi)
		f.Eventually(2*time.Minute, name+": "+c.console+" in kubectl logs -c guest-console-log", func(_ context.Context) (bool, error) {
			return strings.Contains(f.Kubectl("logs", pod.Name, "-c", framework.GuestConsoleLog), c.console), nil
		})
		console := f.Kubectl("logs", pod.Name, "-c", framework.GuestConsoleLog)
		if line := klogLine.FindString(console); line != "" {
			t.Errorf("%s: the guest console log has the launcher's lines: %q", name, line)
		}
		if compute := f.Kubectl("logs", pod.Name, "-c", "compute"); strings.Contains(compute, framework.GuestMarker) {
			t.Errorf("%s: the compute container's log has the guest's console", name)
		}
		overlay := layout.InPod(layout.DiskRel("root")) + "/" + layout.Qcow2DiskFile
		size, err := strconv.ParseInt(strings.TrimSpace(f.Kubectl("exec", pod.Name, "-c", "compute", "--", "stat", "-c", "%s", overlay)), 10, 64)
		if err != nil || size > 8<<20 {
			t.Errorf("%s: overlay %s is %d bytes (%v): the image looks copied", name, overlay, size, err)
		}
	}
}
