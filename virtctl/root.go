// Package virtctl is the command line users drive virtual machines with, as KubeVirt's
// virtctl: start, stop, restart, console, expose, port-forward, ssh, scp and version.
// Installed as kubectl-virt it is also the kubectl plugin `kubectl virt ...`. Cluster access
// is kubectl's: $KUBECONFIG or ~/.kube/config, and the same --kubeconfig, --context,
// --namespace, ... flags.
package virtctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Version is stamped at build time with -ldflags "-X github.com/vmctl/vmctl/virtctl.Version=...".
var Version = "devel"

// NewRootCommand is virtctl with all its subcommands.
func NewRootCommand() *cobra.Command {
	name := "virtctl"
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		name = "kubectl virt" // so usage lines read as the user typed them
	}
	root := &cobra.Command{
		Use:           name,
		Short:         "Control virtual machines on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	cl := newClientLoader(root.PersistentFlags())
	root.AddCommand(
		startCommand(cl), stopCommand(cl), restartCommand(cl),
		consoleCommand(cl), exposeCommand(cl),
		portForwardCommand(cl), sshCommand(cl), scpCommand(cl),
		&cobra.Command{
			Use:   "version",
			Short: "Print virtctl's version",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), "virtctl", Version)
				return err
			},
		},
	)
	return root
}
