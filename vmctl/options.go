// Package vmctl clones a prototype VirtualMachine for the pod it runs in, so that ordinary
// workload controllers (Deployments, DaemonSets) drive virtual machines: one clone per pod,
// pinned to the pod's node, owned by the pod, deleted when the pod goes.
package vmctl

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/vmctl/vmctl/vmctl/forward"
)

// DefaultPodinfoDir is where a downward API volume puts the pod's name and namespace.
const DefaultPodinfoDir = "/etc/podinfo"

// ErrUsage marks a bad command line: the caller prints usage and exits 2.
var ErrUsage = errors.New("usage")

// Options are vmctl's command line: the original vmctl's flags plus what running it well
// needs (where the pod identity comes from, a kubeconfig outside a cluster, the probe port).
type Options struct {
	// Prototype is the name of the VirtualMachine to clone (the one positional argument).
	Prototype string
	// Namespace is where the clone is created; empty means the pod's namespace, else "default".
	Namespace string
	// ProtoNamespace is where the prototype lives; defaults to Namespace.
	ProtoNamespace string
	// HostnameOverride stands in for the pod name when vmctl runs outside a pod (tests).
	HostnameOverride string
	// PodinfoDir holds the downward API files "name" and "namespace" when the env has none.
	PodinfoDir string
	// Kubeconfig is used outside a cluster; empty means in-cluster configuration.
	Kubeconfig string
	// HealthAddr serves /healthz and /readyz (ready only while the clone is); empty disables.
	HealthAddr string
	// PrototypeBackoffMax caps the wait between attempts to read the prototype.
	PrototypeBackoffMax time.Duration
	// Forward lists the pod's ports vmctl relays to its clone's guest; none by default.
	Forward forward.Ports
	// PodVolumes binds prototype volumes (keys) to the claims of the pod's volumes (values).
	PodVolumes map[string]string
	// AllowSharedVolumes clones a prototype whose read-write claims every clone would share.
	AllowSharedVolumes bool
}

// AddFlags registers the options on a flag set.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", "", `namespace to create the derived VirtualMachine in (default: the pod's namespace, else "default")`)
	fs.StringVar(&o.ProtoNamespace, "proto-namespace", "", "namespace of the prototype VirtualMachine (default: --namespace)")
	fs.StringVar(&o.HostnameOverride, "hostname-override", "", "pod name to use when running outside a pod, mainly for tests")
	fs.StringVar(&o.PodinfoDir, "podinfo-dir", DefaultPodinfoDir, "downward API volume with the files name and namespace (used when POD_NAME/POD_NAMESPACE are unset)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig for running outside a cluster (default: in-cluster configuration)")
	fs.StringVar(&o.HealthAddr, "health-addr", ":8080", "address of /healthz and /readyz; /readyz succeeds only while the clone's VM is Ready")
	fs.Var(&o.Forward, "forward", "the pod's ports to relay to the clone's guest, [LISTEN:]TARGET[/tcp|/udp] separated by commas, e.g. 8000:80,2222:22,53/udp (needs watch on virtualmachineinstances)")
	fs.StringToStringVar(&o.PodVolumes, "pod-volume", nil, "PROTOTYPE_VOLUME=POD_VOLUME[,...]: the clone's volume becomes the claim of the pod's volume (a StatefulSet's volumeClaimTemplates, or a generic ephemeral volume), so each clone has a disk of its own")
	fs.BoolVar(&o.AllowSharedVolumes, "allow-shared-volumes", false, "clone a prototype whose read-write PVC volumes every clone would open at once (refused by default)")
	fs.DurationVar(&o.PrototypeBackoffMax, "prototype-backoff-max", 30*time.Second, "longest wait between attempts to read a missing prototype")
}

// Complete takes the positional arguments. Namespace defaults are filled by Resolve, once the
// pod's own namespace is known.
func (o *Options) Complete(args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%w: expected exactly one argument, the prototype VirtualMachine's name; got %d", ErrUsage, len(args))
	}
	o.Prototype = args[0]
	for protoVolume, podVolume := range o.PodVolumes {
		if protoVolume == "" || podVolume == "" {
			return fmt.Errorf("%w: --pod-volume %s=%s: want PROTOTYPE_VOLUME=POD_VOLUME", ErrUsage, protoVolume, podVolume)
		}
	}
	if _, port, err := net.SplitHostPort(o.HealthAddr); err == nil {
		for _, p := range o.Forward {
			if p.Protocol == forward.TCP && strconv.Itoa(p.Listen) == port {
				return fmt.Errorf("%w: --forward %s listens on the port of --health-addr %s; move one of them", ErrUsage, p, o.HealthAddr)
			}
		}
	}
	return nil
}

// defaultNamespaces fills Namespace from the pod's namespace (else "default") and
// ProtoNamespace from Namespace.
func (o *Options) defaultNamespaces(podNamespace string) {
	if o.Namespace == "" {
		o.Namespace = podNamespace
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.ProtoNamespace == "" {
		o.ProtoNamespace = o.Namespace
	}
}
