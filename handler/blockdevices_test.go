package handler

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestPodBlockDevices(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", VolumeDevices: []corev1.VolumeDevice{
		{Name: "pvc-root", DevicePath: "/dev/vmi-disks/root"},
		{Name: "other", DevicePath: "/dev/xvda"}, // not one of the launcher's
	}}}}}
	if got, want := podBlockDevices(pod), map[string]bool{"root": true}; !maps.Equal(got, want) {
		t.Fatalf("block devices %v, want %v", got, want)
	}
}

// A block-mode claim's device node in the launcher's container is given to the launcher's
// user; anything else at its path is refused.
func TestPrepareNodeDisksGivesTheDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "root"}}},
		{Name: "files", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "files"}}},
	}}}
	for _, tc := range []struct {
		name    string
		make    func(path string) error
		wantErr string
	}{
		{name: "a block device", make: func(path string) error { return syscall.Mknod(path, syscall.S_IFBLK|0o600, int(7<<8|200)) }},
		{name: "a file", make: func(path string) error { return os.WriteFile(path, nil, 0o600) }, wantErr: "not a block device"},
		{name: "nothing", make: func(string) error { return nil }, wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			launcher := t.TempDir()
			dev := filepath.Join(launcher, layout.BlockDevice("root"))
			if err := os.MkdirAll(filepath.Dir(dev), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(dev); err != nil {
				t.Fatal(err)
			}
			err := prepareNodeDisks(vmi, map[string]bool{"root": true}, func() (*os.Root, error) { return os.OpenRoot(launcher) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(dev, &st); err != nil || st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID {
				t.Fatalf("device owned by %d:%d (%v), want the launcher's user", st.Uid, st.Gid, err)
			}
		})
	}
}
