// Package virtctl is the command line users drive virtual machines with, as KubeVirt's
// virtctl: start, stop, restart, console and expose (subcommands arrive with issue 7).
package virtctl

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Version is stamped at build time with -ldflags "-X github.com/vmctl/vmctl/virtctl.Version=...".
var Version = "devel"

// NewRootCommand is virtctl with all its subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "virtctl",
		Short:         "Control virtual machines on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print virtctl's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "virtctl", Version)
			return err
		},
	})
	return root
}
