// Command vmctl, run as a pod, clones a prototype VirtualMachine into <proto>-<pod> next to
// the pod and deletes the clone when the pod goes. The cloning itself arrives with issue 6;
// until then vmctl checks its command line and exits with an error saying so.
package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/vmctl"
)

func main() {
	var opts vmctl.Options
	opts.AddFlags(pflag.CommandLine)
	component.ParseFlags()
	if err := opts.Complete(pflag.Args()); err != nil {
		component.Exit(err)
	}
	component.Exit(errors.New("vmctl: cloning is not implemented yet (issue 6)"))
}
