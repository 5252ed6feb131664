package handler

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestPrepareHostDisks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hostDisk  v1.HostDisk
		existing  string // the image's content before; "" for none
		link      bool   // the image is a link instead
		wantSize  int64  // -1: no file
		wantErr   string
		specError bool
	}{
		{name: "DiskOrCreate makes a sparse image, whole sectors", hostDisk: v1.HostDisk{Path: "/data/disk.img", Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("1000")},
			wantSize: 1024},
		{name: "DiskOrCreate keeps an image there", hostDisk: v1.HostDisk{Path: "/data/disk.img", Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("1Mi")},
			existing: "the guest's data", wantSize: int64(len("the guest's data"))},
		{name: "Disk takes the image there", hostDisk: v1.HostDisk{Path: "/srv/seed.raw", Type: v1.HostDiskExists},
			existing: "seed", wantSize: 4},
		{name: "Disk without an image", hostDisk: v1.HostDisk{Path: "/srv/seed.raw", Type: v1.HostDiskExists},
			wantSize: -1, wantErr: "/srv/seed.raw does not exist on the node", specError: true},
		{name: "a link is not an image", hostDisk: v1.HostDisk{Path: "/srv/seed.raw", Type: v1.HostDiskExists},
			link: true, wantSize: -1, wantErr: "not a regular file", specError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			launcher := t.TempDir()
			dir := filepath.Join(launcher, layout.HostDiskDir("host"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			image := filepath.Join(dir, filepath.Base(tc.hostDisk.Path))
			switch {
			case tc.link:
				if err := os.Symlink("/etc/hostname", image); err != nil {
					t.Fatal(err)
				}
			case tc.existing != "":
				if err := os.WriteFile(image, []byte(tc.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			hd := tc.hostDisk
			vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
				{Name: "other", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1Mi")}}},
				{Name: "host", VolumeSource: v1.VolumeSource{HostDisk: &hd}},
			}}}
			err := prepareNodeDisks(vmi, nil, func() (*os.Root, error) { return os.OpenRoot(launcher) })
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || isSpecError(err) != tc.specError) {
				t.Fatalf("error %v; want %q (spec error %v)", err, tc.wantErr, tc.specError)
			}
			if tc.wantSize < 0 {
				return
			}
			fi, err := os.Stat(image)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != tc.wantSize {
				t.Errorf("image of %d bytes, want %d", fi.Size(), tc.wantSize)
			}
			if st := fi.Sys().(*syscall.Stat_t); os.Geteuid() == 0 && (st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID) {
				t.Errorf("image owned by %d:%d, want the launcher's user", st.Uid, st.Gid)
			}
		})
	}
}

// An instance without hostDisks never opens the launcher's file system.
func TestPrepareHostDisksWithoutAny(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1Mi")}}}}}}
	if err := prepareNodeDisks(vmi, nil, func() (*os.Root, error) { t.Fatal("opened"); return nil, nil }); err != nil {
		t.Fatal(err)
	}
}

// A hostDisk directory that is a link in the launcher's file system leads nowhere.
func TestPrepareHostDisksStaysInTheLaunchersFileSystem(t *testing.T) {
	launcher := t.TempDir()
	if err := os.MkdirAll(filepath.Join(launcher, layout.HostDisksDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(launcher, layout.HostDiskDir("host"))); err != nil {
		t.Fatal(err)
	}
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{{Name: "host",
		VolumeSource: v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/data/disk.img", Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("1Mi")}}}}}}
	if err := prepareNodeDisks(vmi, nil, func() (*os.Root, error) { return os.OpenRoot(launcher) }); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("error %v; want the link refused", err)
	}
}
