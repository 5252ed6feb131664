package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A containerDisk layer is KubeVirt's convention: /disk/ and /disk/<file>, both 107:107,
// nothing else, with the disk's bytes, and the same bytes from one build to the next.
func TestDiskLayerLayout(t *testing.T) {
	local := filepath.Join(t.TempDir(), "disk.img")
	data := bytes.Repeat([]byte("disk"), 3000)
	if err := os.WriteFile(local, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := writeDiskLayer(&a, local, "x.qcow2"); err != nil {
		t.Fatal(err)
	}
	if err := writeDiskLayer(&b, local, "x.qcow2"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same disk gave different layers")
	}
	tr := tar.NewReader(&a)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 107 || h.Gid != 107 {
			t.Errorf("%s owned by %d:%d, want 107:107", h.Name, h.Uid, h.Gid)
		}
		if !h.ModTime.Equal(epoch) {
			t.Errorf("%s mtime %v", h.Name, h.ModTime)
		}
		switch h.Name {
		case "disk/":
			if h.Typeflag != tar.TypeDir {
				t.Errorf("disk/ is not a directory")
			}
		case "disk/x.qcow2":
			got, err := io.ReadAll(tr)
			if err != nil || !bytes.Equal(got, data) || h.Typeflag != tar.TypeReg {
				t.Errorf("disk/x.qcow2: %d bytes, type %c, %v", len(got), h.Typeflag, err)
			}
			if h.Mode&0o444 != 0o444 {
				t.Errorf("disk/x.qcow2 mode %o: not readable by all", h.Mode)
			}
		}
	}
	if got := strings.Join(names, " "); got != "disk/ disk/x.qcow2" {
		t.Fatalf("layer holds %q", got)
	}
}

// The cached layer is written once, beside the disk, and then reused as it is.
func TestContainerDiskImageCachesLayer(t *testing.T) {
	local := filepath.Join(t.TempDir(), "d.img")
	if err := os.WriteFile(local, []byte("raw disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := containerDiskImage(local, "d.img")
	if err != nil {
		t.Fatal(err)
	}
	first, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(local + ".layer.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	img, err = containerDiskImage(local, "d.img")
	if err != nil {
		t.Fatal(err)
	}
	second, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	again, err := os.Stat(local + ".layer.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if first != second || !again.ModTime().Equal(st.ModTime()) {
		t.Fatalf("digests %s %s; layer rewritten: %v", first, second, !again.ModTime().Equal(st.ModTime()))
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 0 || len(cf.Config.Cmd) != 0 {
		t.Fatalf("a containerDisk has no entrypoint: %v %v", cf.Config.Entrypoint, cf.Config.Cmd)
	}
}

// buildCached runs the script only when its output is missing.
func TestBuildCachedRunsOnce(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "build.sh")
	count := filepath.Join(dir, "runs")
	if err := os.WriteFile(script, []byte("echo run >>\""+count+"\"; echo disk >\"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cache", "d.img")
	for i := 0; i < 2; i++ {
		if err := buildCached(out, "test disk", script, out); err != nil {
			t.Fatal(err)
		}
	}
	if runs, _ := os.ReadFile(count); string(runs) != "run\n" {
		t.Fatalf("script ran %q", runs)
	}
}

// The kernel command lines the brief of each disk promises: the testguest's own, and a
// Debian whose login prompt is on the serial port (virtctl console).
func TestDiskKernelCommandLines(t *testing.T) {
	for file, want := range map[string]string{
		filepath.Join("..", "..", testguestDiskDir, "grub.cfg"): "linux /vmlinuz console=ttyS0 no_timer_check\n",
		filepath.Join("..", "..", debianGuestDir, "grub.cfg"):   "linux /vmlinuz root=LABEL=debian-root ro console=tty0 console=ttyS0,115200 no_timer_check\n",
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s: no line %q", file, want)
		}
	}
}

// cloud-init looks only where KubeVirt puts its data, and only ifupdown renders networks.
func TestDebianGuestCloudConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", debianGuestDir, "cloud.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"datasource_list: [NoCloud, ConfigDrive, None]\n", "renderers: [eni]\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("cloud.cfg: no %q", want)
		}
	}
}
