package handler

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestBuildEnvironment(t *testing.T) {
	full := func() *v1.VirtualMachineInstance {
		vmi := newInstance()
		vmi.Spec.Volumes = append(vmi.Spec.Volumes,
			v1.Volume{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
			v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
			v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc"}}})
		vmi.Spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "k", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}}}
		return vmi
	}
	common := map[string]domain.HostDisk{
		"cloudinit": {Path: "/var/run/kubevirt-private/vmi-disks/cloudinit/noCloud.iso", Format: "raw"},
		"scratch":   {Path: "/var/run/kubevirt-private/vmi-disks/scratch/disk.raw", Format: "raw"},
		"data":      {Path: "/var/run/kubevirt-private/vmi-disks/data/disk.img", Format: "raw"},
	}
	with := func(root domain.HostDisk) map[string]domain.HostDisk {
		out := map[string]domain.HostDisk{"root": root}
		for k, v := range common {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		files   []string // relative to the private directory
		want    map[string]domain.HostDisk
		wantErr string
		specErr bool // the instance fails rather than waits
	}{
		{
			name:  "qcow2 containerDisk",
			files: []string{"vmi-disks/root/disk.qcow2", layout.KernelRel, layout.InitrdRel},
			want:  with(domain.HostDisk{Path: "/var/run/kubevirt-private/vmi-disks/root/disk.qcow2", Format: "qcow2"}),
		},
		{name: "no overlay yet", files: []string{layout.KernelRel, layout.InitrdRel}, wantErr: "has not written"},
		{name: "the holder found no image", files: []string{"vmi-disks/root/error", layout.KernelRel, layout.InitrdRel}, wantErr: `containerDisk "root": x`, specErr: true},
		{name: "no initrd", files: []string{"vmi-disks/root/disk.qcow2", layout.KernelRel}, wantErr: "kernel-boot/initrd is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, rel := range tc.files {
				mustWrite(t, filepath.Join(dir, rel), "x")
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			env, err := buildEnvironment(full(), root, domain.TypeQEMU, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || isSpecError(err) != tc.specErr {
					t.Fatalf("err = %v, want %q (final: %v)", err, tc.wantErr, tc.specErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := domain.Environment{
				DomainType:       domain.TypeQEMU,
				Volumes:          tc.want,
				KernelPath:       "/var/run/kubevirt-private/kernel-boot/kernel",
				InitrdPath:       "/var/run/kubevirt-private/kernel-boot/initrd",
				NVRAMPath:        "/var/run/kubevirt-private/efivars.fd",
				SerialLogPath:    "/var/run/kubevirt-private/console.log",
				SerialSocketPath: "/var/run/kubevirt-private/virt-serial0",
				VNCSocketPath:    "/var/run/kubevirt-private/virt-vnc",
				AgentSocketPath:  "/var/run/kubevirt-private/virt-agent0",
				Interfaces:       map[string]domain.Attachment{"default": {Mode: domain.NetworkTap, TapDevice: "tap0", MAC: instanceMAC(full())}},
			}
			if diff := cmp.Diff(want, env); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			if _, err := domain.Convert(full(), env); err != nil {
				t.Errorf("Convert refuses the environment: %v", err)
			}
		})
	}
}

func TestEnvironmentRefusesPlantedSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(outside, "disk.raw"), "host secret")
	if err := os.MkdirAll(filepath.Join(dir, "vmi-disks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "vmi-disks", "root")); err != nil {
		t.Fatal(err)
	}
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if _, err := buildEnvironment(newInstance(), root, domain.TypeQEMU, nil); err == nil {
		t.Fatal("a containerDisk behind a symlink out of the pod was accepted")
	}
}

func TestAttachments(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{}
	if got, err := attachments(vmi); err != nil || got["default"] != layout.TapDevice {
		t.Errorf("an interface without binding: %v, %v; want masquerade on %s", got, err, layout.TapDevice)
	}
	vmi.Spec.Domain.Devices.Interfaces = append(vmi.Spec.Domain.Devices.Interfaces, v1.Interface{Name: "second"})
	if _, err := attachments(vmi); !isSpecError(err) {
		t.Errorf("two interfaces: %v, want a spec error", err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInstanceMAC(t *testing.T) {
	a, b := newInstance(), newInstance()
	b.UID = "another"
	if instanceMAC(a) != instanceMAC(newInstance()) || instanceMAC(a) == instanceMAC(b) {
		t.Errorf("MACs %s, %s: want one per instance UID", instanceMAC(a), instanceMAC(b))
	}
	if mac, err := net.ParseMAC(instanceMAC(a)); err != nil || !strings.HasPrefix(mac.String(), "52:54:00:") {
		t.Errorf("MAC %s (%v): want one in 52:54:00", instanceMAC(a), err)
	}
}

// Persistent EFI variables live in the VM's state claim, others in the pod's private directory.
func TestNVRAMPath(t *testing.T) {
	vmi := newInstance()
	if got := nvramPath(vmi); got != "/var/run/kubevirt-private/efivars.fd" {
		t.Errorf("nvram %s, want the pod's", got)
	}
	vmi.Spec.Domain.Firmware = &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{Persistent: ptrTo(true)}}}
	if got := nvramPath(vmi); got != layout.PersistentNVRAM {
		t.Errorf("nvram %s, want %s", got, layout.PersistentNVRAM)
	}
}

// A volume shared as a filesystem is no disk: the guest reaches it through its virtiofsd's
// socket, and a block-mode claim has no file system to share.
func TestEnvironmentOfFilesystems(t *testing.T) {
	vmi := newInstance()
	vmi.Spec.Volumes = append(vmi.Spec.Volumes,
		v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc"}}},
		v1.Volume{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app"}}})
	vmi.Spec.Domain.Devices.Filesystems = []v1.Filesystem{{Name: "data", Virtiofs: &v1.FilesystemVirtiofs{}}, {Name: "app", Virtiofs: &v1.FilesystemVirtiofs{}}}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "vmi-disks/root/disk.qcow2"), "x")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	env, err := buildEnvironment(vmi, root, domain.TypeQEMU, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"data": "/var/run/kubevirt/virtiofs-containers/data.sock", "app": "/var/run/kubevirt/virtiofs-containers/app.sock"}
	if diff := cmp.Diff(want, env.VirtiofsSockets); diff != "" {
		t.Errorf("sockets (-want +got):\n%s", diff)
	}
	if _, ok := env.Volumes["data"]; ok {
		t.Errorf("the shared claim is a disk too: %v", env.Volumes)
	}
	if _, err := buildEnvironment(vmi, root, domain.TypeQEMU, map[string]bool{"data": true}); err == nil || !isSpecError(err) || !strings.Contains(err.Error(), "block-mode") {
		t.Errorf("a block-mode claim shared as a filesystem: err %v, want the instance failed saying why", err)
	}
}
