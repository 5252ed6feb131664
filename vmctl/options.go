// Package vmctl clones a prototype VirtualMachine for the pod it runs in, so that ordinary
// workload controllers (Deployments, DaemonSets) drive virtual machines.
package vmctl

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Options are vmctl's command line, as the original vmctl defined it.
type Options struct {
	// Prototype is the name of the VirtualMachine to clone (the one positional argument).
	Prototype string
	// Namespace is where the clone is created.
	Namespace string
	// ProtoNamespace is where the prototype lives; defaults to Namespace.
	ProtoNamespace string
	// HostnameOverride stands in for the pod name when vmctl runs outside a pod (tests).
	HostnameOverride string
}

// AddFlags registers the options on a flag set.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", "default", "namespace to create the derived VirtualMachine in")
	fs.StringVar(&o.ProtoNamespace, "proto-namespace", "", "namespace of the prototype VirtualMachine (default: --namespace)")
	fs.StringVar(&o.HostnameOverride, "hostname-override", "", "pod name to use when running outside a pod, mainly for tests")
}

// Complete takes the positional arguments and fills defaults.
func (o *Options) Complete(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("expected exactly one argument, the prototype VirtualMachine's name; got %d", len(args))
	}
	o.Prototype = args[0]
	if o.ProtoNamespace == "" {
		o.ProtoNamespace = o.Namespace
	}
	return nil
}
