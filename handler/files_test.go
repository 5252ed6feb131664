package handler

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	vmi := newInstance()
	vmi.Spec.Volumes = append(vmi.Spec.Volumes,
		v1.Volume{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
		v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1000M")}}})
	if err := writeFiles(vmi, root, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}

	disk := filepath.Join(dir, "vmi-disks", "scratch", "disk.raw")
	fi, err := os.Stat(disk)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 1000*1000*1000 {
		t.Errorf("emptyDisk size = %d", fi.Size())
	}
	if blocks := fi.Sys().(*syscall.Stat_t).Blocks; blocks != 0 {
		t.Errorf("emptyDisk is not sparse: %d blocks", blocks)
	}
	// QEMU runs as the pod's user and writes the disk.
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID {
		t.Errorf("emptyDisk owned by %d:%d, want the launcher's user", st.Uid, st.Gid)
	}
	iso, err := os.ReadFile(filepath.Join(dir, "vmi-disks", "cloudinit", "noCloud.iso"))
	if err != nil {
		t.Fatal(err)
	}
	if _, files := readISO(t, iso); files["user-data"] != "#cloud-config\n" {
		t.Errorf("ISO files = %v", files)
	}

	// A guest wrote its disk; a later sync must keep it.
	if err := os.WriteFile(disk, []byte("guest data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFiles(vmi, root, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(disk); string(got) != "guest data" {
		t.Errorf("emptyDisk rewritten: %q", got)
	}
}

func TestEmptyDiskRoundsUpToSectors(t *testing.T) {
	root, _ := os.OpenRoot(t.TempDir())
	defer root.Close()
	if err := ensureEmptyDisk(root, "d/disk.raw", 1000); err != nil {
		t.Fatal(err)
	}
	if fi, _ := root.Stat("d/disk.raw"); fi.Size() != 1024 {
		t.Errorf("size = %d, want 1024", fi.Size())
	}
}

func TestFilesStayInThePod(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "vmi-disks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "vmi-disks", "scratch")); err != nil {
		t.Fatal(err)
	}
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if err := ensureEmptyDisk(root, diskRel("scratch", layout.RawDiskFile), 4096); err == nil {
		t.Error("wrote through a symlink out of the pod")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files appeared outside the pod: %v", entries)
	}
}
