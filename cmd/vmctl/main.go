// Command vmctl, run as a pod, clones a prototype VirtualMachine into <proto>-<pod> on the
// pod's node, keeps it while the pod lives and deletes it on SIGTERM:
//
//	vmctl [--namespace NS] [--proto-namespace NS] [--hostname-override POD] PROTOTYPE
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/vmctl"
)

func main() {
	var opts vmctl.Options
	opts.AddFlags(pflag.CommandLine)
	pflag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: vmctl [flags] PROTOTYPE\n\nClones the VirtualMachine PROTOTYPE for the pod vmctl runs in.\n\n")
		pflag.PrintDefaults()
	}
	component.ParseFlags()
	if err := opts.Complete(pflag.Args()); err != nil {
		usage(err)
	}
	err := vmctl.Run(component.SignalContext(), opts)
	if errors.Is(err, vmctl.ErrUsage) {
		usage(err)
	}
	component.Exit(err)
}

// usage reports a command line error the way flag parsing does: message, usage, status 2.
func usage(err error) {
	klog.Flush()
	fmt.Fprintf(os.Stderr, "vmctl: %v\n", err)
	pflag.Usage()
	os.Exit(2)
}
