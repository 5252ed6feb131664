package deviceplugin

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Device is one host device node offered to pods as an extended resource.
type Device struct {
	// Resource is the extended resource name, e.g. "devices.kubevirt.io/kvm".
	Resource string
	// HostPath is the device node on the host, e.g. "/dev/kvm".
	HostPath string
	// ContainerPath is where the node appears in the container; empty means HostPath.
	ContainerPath string
	// Count is how many pods may hold the device at once. The node itself is shared, so this
	// is only a scheduling limit (KubeVirt advertises e.g. 1000 for kvm and 110 for tun).
	Count int
}

// maxSocketPath is the longest unix socket path that fits sockaddr_un.sun_path (108 bytes)
// with its terminating NUL, which C clients and some kernels' tools expect.
const maxSocketPath = 107

// shortName is the last segment of the resource name made safe for a file name and a device
// ID: lower case, with anything but [a-z0-9._-] replaced by '-'. "devices.kubevirt.io/kvm"
// gives "kvm".
func shortName(resource string) string {
	name := resource[strings.LastIndex(resource, "/")+1:]
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		default:
			return '-'
		}
	}, name)
}

// socketName is the base name of the device's plugin socket, which is also the Endpoint the
// kubelet is told. The prefix keeps our sockets apart from other plugins' in the shared dir.
func socketName(resource string) string {
	return "vmctl-" + shortName(resource) + ".sock"
}

// deviceID is the ID of the i-th instance of a device, e.g. "kvm-0". The kubelet limits IDs
// to 63 characters, which validate enforces.
func deviceID(short string, i int) string {
	return short + "-" + strconv.Itoa(i)
}

// validate rejects devices that could never be served or would collide in dir, so that such
// configuration errors surface from Run instead of as endless retries.
func validate(dir string, devices []Device) error {
	sockets := make(map[string]string, len(devices))
	if p := filepath.Join(dir, "kubelet.sock"); len(p) > maxSocketPath {
		return fmt.Errorf("kubelet socket path %q is longer than %d bytes", p, maxSocketPath)
	}
	for _, d := range devices {
		// Extended resources must be domain-prefixed qualified names.
		if !strings.Contains(d.Resource, "/") {
			return fmt.Errorf("resource %q: not domain-prefixed", d.Resource)
		}
		if errs := validation.IsQualifiedName(d.Resource); len(errs) > 0 {
			return fmt.Errorf("resource %q: %s", d.Resource, strings.Join(errs, "; "))
		}
		if d.HostPath == "" {
			return fmt.Errorf("resource %q: no host path", d.Resource)
		}
		if d.Count <= 0 {
			return fmt.Errorf("resource %q: count %d is not positive", d.Resource, d.Count)
		}
		short := shortName(d.Resource)
		if id := deviceID(short, d.Count-1); len(id) > 63 {
			return fmt.Errorf("resource %q: device ID %q is longer than 63 characters", d.Resource, id)
		}
		name := socketName(d.Resource)
		if other, ok := sockets[name]; ok {
			return fmt.Errorf("resources %q and %q would share socket %s", other, d.Resource, name)
		}
		sockets[name] = d.Resource
		if p := filepath.Join(dir, name); len(p) > maxSocketPath {
			return fmt.Errorf("resource %q: socket path %q is longer than %d bytes", d.Resource, p, maxSocketPath)
		}
	}
	return nil
}
