package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The testguest image is a KubeVirt kernelBoot container: spec.domain.firmware.kernelBoot
// .container with kernelPath /boot/vmlinuz and initrdPath /boot/initrd.img. KubeVirt copies the
// two files out of the image, so it has no base, shell or entrypoint. The kernel is Debian's
// cloud kernel; the initramfs is busybox, a few modules and hack/images/guest/init.
const (
	guestImageDir      = "hack/images/guest"
	guestKernelMeta    = "linux-image-cloud-amd64"
	guestBusyboxPkg    = "busybox-static"
	guestKernelPath    = "/boot/vmlinuz"
	guestInitrdPath    = "/boot/initrd.img"
	guestKernelLabel   = "io.vmctl.guest.kernel"
	guestModulesList   = "modules"
	guestModulesInInit = "etc/modules.order"
)

func init() {
	register("testguest", func(b *Builder) (v1.Image, error) { return b.testguestImage() })
}

func (b *Builder) testguestImage() (v1.Image, error) {
	agent, err := b.agentEntries()
	if err != nil {
		return nil, err
	}
	kernel, initrds, version, err := b.testguestBoot(nil, agent)
	if err != nil {
		return nil, err
	}
	return filesImage([]File{
		{Path: guestKernelPath, Mode: 0o644, Data: kernel},
		{Path: guestInitrdPath, Mode: 0o644, Data: initrds[0]},
		{Path: guestAgentInitrdPath, Mode: 0o644, Data: initrds[1]},
	}, v1.Config{Labels: map[string]string{guestKernelLabel: version}})
}

// testguestBoot returns the guest's kernel, the kernel's version and one initramfs for each
// extra: the testguest's files plus those entries.
func (b *Builder) testguestBoot(extras ...[]cpioEntry) (kernel []byte, initrds [][]byte, version string, err error) {
	apt, err := hostApt.records(guestKernelMeta, guestBusyboxPkg)
	if err != nil {
		return nil, nil, "", err
	}
	kernelPkg, kernelVersion, err := pinnedDependency(apt[guestKernelMeta], "linux-image-")
	if err != nil {
		return nil, nil, "", err
	}
	kernelTree, err := b.debTree(hostApt, kernelPkg, kernelVersion)
	if err != nil {
		return nil, nil, "", err
	}
	busyboxTree, err := b.debTree(hostApt, guestBusyboxPkg, apt[guestBusyboxPkg]["Version"])
	if err != nil {
		return nil, nil, "", err
	}
	// The package's one /lib/modules/<dir> is the kernel's release (uname -r).
	dirs, err := filepath.Glob(filepath.Join(kernelTree, "lib", "modules", "*"))
	if err != nil || len(dirs) != 1 {
		return nil, nil, "", fmt.Errorf("%s: expected one lib/modules/<version>, found %v", kernelPkg, dirs)
	}
	version = filepath.Base(dirs[0])
	kernel, err = os.ReadFile(filepath.Join(kernelTree, "boot", "vmlinuz-"+version))
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", kernelPkg, err)
	}
	for _, extra := range extras {
		initrd, err := b.testguestInitramfs(dirs[0], version, filepath.Join(busyboxTree, "bin", "busybox"), extra)
		if err != nil {
			return nil, nil, "", err
		}
		initrds = append(initrds, initrd)
	}
	return kernel, initrds, version, nil
}

// testguestInitramfs packs busybox, the modules of hack/images/guest/modules with their
// dependencies, the scripts of hack/images/guest, and extra.
func (b *Builder) testguestInitramfs(moduleDir, version, busybox string, extra []cpioEntry) ([]byte, error) {
	dir := filepath.Join(b.Root, guestImageDir)
	wanted, err := readList(filepath.Join(dir, guestModulesList))
	if err != nil {
		return nil, err
	}
	order, err := moduleLoadOrder(moduleDir, wanted)
	if err != nil {
		return nil, err
	}

	var fs initramfsTree
	// Mount points and the places busybox --install puts its applet links.
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "var", "root", "sbin", "usr/bin", "usr/sbin", "www", "www/cgi-bin"} {
		fs.dir(d)
	}
	// The kernel opens /dev/console for /init before anything is mounted: without this node
	// /init would run with no stdout, and the marker line would never reach the serial port.
	fs.add(cpioEntry{Path: "dev/console", Mode: cpioCharDev | 0o600, Major: 5, Minor: 1})
	fs.add(cpioEntry{Path: "bin/sh", Mode: cpioSymlink | 0o777, Data: []byte("busybox")})
	for _, f := range []struct{ local, path string }{
		{busybox, "bin/busybox"},
		{filepath.Join(dir, "init"), "init"},
		{filepath.Join(dir, "udhcpc.script"), "etc/udhcpc.script"},
		// busybox acpid's default action for the power button (event PWRF, code 00000080).
		{filepath.Join(dir, "power-button"), "etc/acpi/PWRF/00000080"},
		{filepath.Join(dir, "poweroff.cgi"), "www/cgi-bin/poweroff"},
		{filepath.Join(dir, "lookup.cgi"), "www/cgi-bin/lookup"},
		{filepath.Join(dir, "bytes.cgi"), "www/cgi-bin/bytes"},
		{filepath.Join(dir, "uptime.cgi"), "www/cgi-bin/uptime"},
		{filepath.Join(dir, "tpm.cgi"), "www/cgi-bin/tpm"},
		{filepath.Join(dir, "disks.cgi"), "www/cgi-bin/disks"},
		{filepath.Join(dir, "isofiles.cgi"), "www/cgi-bin/isofiles"},
		{filepath.Join(dir, "pci.cgi"), "www/cgi-bin/pci"},
		{filepath.Join(dir, "efivar.cgi"), "www/cgi-bin/efivar"},
		{filepath.Join(dir, "metrics.cgi"), "www/cgi-bin/metrics"},
		{filepath.Join(dir, "dmi.cgi"), "www/cgi-bin/dmi"},
		{filepath.Join(dir, "acpi.cgi"), "www/cgi-bin/acpi"},
		{filepath.Join(dir, "virtiofs.cgi"), "www/cgi-bin/virtiofs"},
	} {
		if err := fs.file(f.local, f.path, 0o755); err != nil {
			return nil, err
		}
	}
	for _, rel := range order {
		if err := fs.file(filepath.Join(moduleDir, rel), path.Join("lib/modules", version, filepath.ToSlash(rel)), 0o644); err != nil {
			return nil, err
		}
	}
	fs.add(cpioEntry{Path: guestModulesInInit, Mode: cpioRegular | 0o644, Data: []byte(strings.Join(order, "\n") + "\n")})
	for _, e := range extra {
		fs.add(e)
	}
	return gzipInitramfs(fs.entries)
}

// initramfsTree collects entries and adds every parent directory once.
type initramfsTree struct {
	entries []cpioEntry
	dirs    map[string]bool
}

func (t *initramfsTree) dir(p string) {
	if t.dirs == nil {
		t.dirs = map[string]bool{}
	}
	for d := p; d != "." && d != "/" && !t.dirs[d]; d = path.Dir(d) {
		t.dirs[d] = true
		t.entries = append(t.entries, cpioEntry{Path: d, Mode: cpioDir | 0o755})
	}
}

func (t *initramfsTree) add(e cpioEntry) {
	t.dir(path.Dir(e.Path))
	t.entries = append(t.entries, e)
}

func (t *initramfsTree) file(local, p string, mode uint32) error {
	data, err := os.ReadFile(local)
	if err != nil {
		return err
	}
	t.add(cpioEntry{Path: p, Mode: cpioRegular | mode, Data: data})
	return nil
}

// readList reads a file of one item a line; '#' starts a comment.
func readList(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var items []string
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			items = append(items, line)
		}
	}
	return items, nil
}
