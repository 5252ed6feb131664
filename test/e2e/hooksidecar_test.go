//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// chassisScript is a hook a user keeps in a ConfigMap, as in KubeVirt's user guide: the
// sidecar-shim runs it with the instance and the domain, and defines what it prints.
const chassisScript = `#!/bin/sh
# onDefineDomain --vmi <instance JSON> --domain <domain XML>, edited as KubeVirt's guide does
# (a temporary file, sed -i, cat): a chassis in the SMBIOS tables, beside what an earlier
# hook put there.
domain=$(mktemp --dry-run)
echo "$4" > "$domain"
chassis="<chassis><entry name='manufacturer'>Scripted Chassis</entry></chassis>"
if grep -q '<sysinfo type="smbios">' "$domain"; then
  sed -i "s|<sysinfo type=\"smbios\">|&$chassis|" "$domain"
else
  sed -i -e "s|</os>|<smbios mode='sysinfo'/></os>|" -e "s|</domain>|<sysinfo type='smbios'>$chassis</sysinfo></domain>|" "$domain"
fi
cat "$domain"
`

// userDataScript is a PreCloudInitIso hook in a ConfigMap: the sidecar-shim runs it with the
// instance and KubeVirt's CloudInitData, and writes the data it prints.
const userDataScript = `#!/bin/sh
# preCloudInitIso --vmi <instance JSON> --cloud-init <CloudInitData JSON>: new user data.
echo "$4" | sed 's/"UserData":"[^"]*"/"UserData":"#cloud-config from the hook"/'
`

// TestHookSidecarsRewriteTheDomain: hook sidecars (KubeVirt's Sidecar feature gate) rewrite
// the domain before virt-handler defines it, one after the other: KubeVirt's example hook image
// sets the base board's manufacturer from an annotation, and a ConfigMap's shell script, run
// by the platform's sidecar-shim (no image named), adds a chassis. The guest reads both from
// its SMBIOS tables. A third sidecar's PreCloudInitIso script rewrites the user data of the
// cloud-init disk, which the guest reads too.
func TestHookSidecarsRewriteTheDomain(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hook-script"},
		Data: map[string]string{"chassis.sh": chassisScript, "userdata.sh": userDataScript}})
	spec := framework.TestGuestSpec("hooked")
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: "cloudinit", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "cloudinit", VolumeSource: v1.VolumeSource{
		CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config from the VM"}}})
	f.CreateVMI(&v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "hooked", Annotations: map[string]string{
			"hooks.kubevirt.io/hookSidecars": `[{"args": ["--version", "v1alpha2"], "image": "vmctl/example-hook-sidecar:devel"},
				{"args": ["--version", "v1alpha3"], "configMap": {"name": "hook-script", "key": "chassis.sh", "hookPath": "/usr/bin/onDefineDomain"}},
				{"args": ["--version", "v1alpha2"], "configMap": {"name": "hook-script", "key": "userdata.sh", "hookPath": "/usr/bin/preCloudInitIso"}}]`,
			"smbios.vm.kubevirt.io/baseBoardManufacturer": "Radical Edward",
		}},
		Spec: spec,
	})
	vmi := f.WaitVMIPhase("hooked", v1.Running, bootTimeout)

	dmi := guestCGI(t, f, vmi, "dmi")
	for _, want := range []string{"board_vendor=Radical Edward", "chassis_vendor=Scripted Chassis"} {
		if lineWith(dmi, want) == "" {
			t.Errorf("the guest's SMBIOS has no %q:\n%s", want, dmi)
		}
	}
	if files := guestCGI(t, f, vmi, "isofiles"); lineWith(files, "user-data=#cloud-config from the hook") == "" {
		t.Errorf("the guest's cloud-init disk has not the hook's user data:\n%s", files)
	}
	images := map[string]string{}
	for _, c := range f.LauncherPod(vmi).Spec.InitContainers {
		images[c.Name] = c.Image
	}
	if images["hook-sidecar-0"] != "vmctl/example-hook-sidecar:devel" || images["hook-sidecar-1"] != "vmctl/sidecar-shim:devel" {
		t.Errorf("hook sidecar containers %v, want hook-sidecar-0 the example image, hook-sidecar-1 the sidecar-shim", images)
	}
}

// imageDiskScript is a hook that gives the guest a disk of an image its claim holds, as
// KubeVirt's debug-tools example brings a QEMU wrapper: the sidecar reads which image from the
// claim at its volumePath, and QEMU opens the image where compute mounts the same claim.
const imageDiskScript = `#!/bin/sh
# onDefineDomain --vmi <instance JSON> --domain <domain XML>: one more disk, read-only.
image=$(cat /hook-data/image-name)
disk="<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='/var/run/hook-data/$image'/><target dev='vdz' bus='virtio'/><readonly/></disk>"
echo "$4" | sed "s|</devices>|$disk</devices>|"
`

// TestAHookSidecarsClaimIsSharedWithCompute: a hook sidecar's pvc (KubeVirt's volumePath and
// sharedComputePath) is mounted in the sidecar and in the compute container: the hook names
// an image from the claim, and the guest reads that image as a disk. The claim is not
// ReadWriteMany, so the instance says it cannot migrate.
func TestAHookSidecarsClaimIsSharedWithCompute(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hook-script"}, Data: map[string]string{"disk.sh": imageDiskScript}})
	f.FilesClaim("hook-data", resource.MustParse("16Mi"), func(dir string) {
		writeSeedISO(t, filepath.Join(dir, "tools.iso"), "HOOKCLAIM", "hello.txt", "from the sidecar's claim\n")
		if err := os.WriteFile(filepath.Join(dir, "image-name"), []byte("tools.iso\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	f.CreateVMI(&v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "claimed", Annotations: map[string]string{
			"hooks.kubevirt.io/hookSidecars": `[{"args": ["--version", "v1alpha2"],
				"pvc": {"name": "hook-data", "volumePath": "/hook-data", "sharedComputePath": "/var/run/hook-data"},
				"configMap": {"name": "hook-script", "key": "disk.sh", "hookPath": "/usr/bin/onDefineDomain"}}]`,
		}},
		Spec: framework.TestGuestSpec("claimed"),
	})
	vmi := f.WaitVMIPhase("claimed", v1.Running, bootTimeout)

	if listed := guestCGI(t, f, vmi, "isofiles"); lineWith(listed, "label=HOOKCLAIM") == "" || lineWith(listed, "hello.txt=from the sidecar's claim") == "" {
		t.Errorf("the guest does not read the claim's image:\n%s", listed)
	}
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "PVC hook-data is not shared") {
		t.Errorf("LiveMigratable %+v, want False: the sidecar's claim is ReadWriteOnce", c)
	}
}
