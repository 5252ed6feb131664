// Package vmctl clones a prototype VirtualMachine for the pod it runs in, so that ordinary
// workload controllers (Deployments, DaemonSets) drive virtual machines: one clone per pod,
// pinned to the pod's node, owned by the pod, deleted when the pod goes.
package vmctl

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
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
}

// AddFlags registers the options on a flag set.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", "", `namespace to create the derived VirtualMachine in (default: the pod's namespace, else "default")`)
	fs.StringVar(&o.ProtoNamespace, "proto-namespace", "", "namespace of the prototype VirtualMachine (default: --namespace)")
	fs.StringVar(&o.HostnameOverride, "hostname-override", "", "pod name to use when running outside a pod, mainly for tests")
	fs.StringVar(&o.PodinfoDir, "podinfo-dir", DefaultPodinfoDir, "downward API volume with the files name and namespace (used when POD_NAME/POD_NAMESPACE are unset)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig for running outside a cluster (default: in-cluster configuration)")
	fs.StringVar(&o.HealthAddr, "health-addr", ":8080", "address of /healthz and /readyz; /readyz succeeds only while the clone's VM is Ready")
	fs.DurationVar(&o.PrototypeBackoffMax, "prototype-backoff-max", 30*time.Second, "longest wait between attempts to read a missing prototype")
}

// Complete takes the positional arguments. Namespace defaults are filled by Resolve, once the
// pod's own namespace is known.
func (o *Options) Complete(args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%w: expected exactly one argument, the prototype VirtualMachine's name; got %d", ErrUsage, len(args))
	}
	o.Prototype = args[0]
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
