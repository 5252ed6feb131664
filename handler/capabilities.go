package handler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"k8s.io/klog/v2"

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
