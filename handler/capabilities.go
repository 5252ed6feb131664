package handler

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"k8s.io/klog/v2"
	"libvirt.org/go/libvirtxml"

	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/launcher/layout"
)

// Capabilities is libvirt's QEMU capabilities cache as this node's trusted probe wrote it
// (virt-launcher probe-capabilities, virt-handler's init container): file name to content.
type Capabilities map[string][]byte

// LoadCapabilities reads the probe's XML files from dir. A missing directory is an empty
// cache: the launchers' libvirtd then probes QEMU itself, as without the handler's help.
func LoadCapabilities(dir string) (Capabilities, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	caps := Capabilities{}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".xml") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		caps[e.Name()] = data
	}
	return caps, nil
}

// unavailableFeatures is libvirt's flag for QEMU's "unavailable-features" CPU property. With
// it, libvirt 9 reads a started guest's CPU back with one qom-get per CPU property, about 500
// monitor commands, and QEMU's monitor reads each command a byte per syscall: measured here,
// 0.28 CPU-s of QEMU and 0.3 s of start per VM on an idle node (a paused domain: 0.33 CPU-s,
// 0.05 without the flag). Without it libvirt reads the CPUID words (feature-words,
// filtered-features): two commands, as it did before QEMU 4.1.
var unavailableFeatures = []byte("<flag name='cpu-unavailable-features'/>")

// ForDomain is the cache to seed for dom: the node's, less the unavailable-features flag when
// dom's CPU is all CPUID, so that reading it back by CPUID words is exact: the TCG model and no
// feature named. Otherwise the node's cache as probed, because without the flag libvirt
// refuses to start a domain naming an MSR feature, and a host-model CPU may carry some.
func (caps Capabilities) ForDomain(dom *libvirtxml.Domain) Capabilities {
	cpu := dom.CPU
	if dom.Type != domain.TypeQEMU || cpu == nil || cpu.Mode != "custom" || cpu.Model == nil ||
		cpu.Model.Value != domain.TCGCPUModel || len(cpu.Features) > 0 {
		return caps
	}
	out := make(Capabilities, len(caps))
	for name, data := range caps {
		out[name] = bytes.Replace(data, unavailableFeatures, nil, 1)
	}
	return out
}

// seedCapabilities puts the cache into a launcher pod before its domain is defined, which is
// when its libvirtd would probe QEMU. Only this node's own probe is ever copied, never a
// file from another pod, so no tenant can feed another's libvirtd. A file the pod has is
// kept. Failing costs the pod a probe, not its start, so errors are only logged.
func seedCapabilities(root *os.Root, caps Capabilities) {
	if len(caps) == 0 {
		return
	}
	if err := mkdirOwned(root, layout.CapabilitiesRel); err != nil {
		klog.V(2).InfoS("not seeding the launcher's capabilities cache", "err", err)
		return
	}
	for name, data := range caps {
		err := createOnce(root, path.Join(layout.CapabilitiesRel, name), func(f *os.File) error {
			_, err := f.Write(data)
			return err
		})
		if err != nil {
			klog.V(2).InfoS("not seeding the launcher's capabilities cache", "file", name, "err", err)
		}
	}
}

// mkdirOwned creates the directories of rel that are missing, owned by the pod's user like
// those its libvirtd makes, which must be able to replace the files when it probes anew.
func mkdirOwned(root *os.Root, rel string) error {
	dir := ""
	for _, part := range strings.Split(rel, "/") {
		dir = path.Join(dir, part)
		err := root.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := root.Lchown(dir, layout.LauncherUID, layout.LauncherGID); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	return nil
}
