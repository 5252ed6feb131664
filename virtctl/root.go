// Package virtctl is the command line users drive virtual machines with, as KubeVirt's
// virtctl: start, stop, restart, pause, unpause, soft-reboot, console, vnc, expose, port-forward,
// ssh, scp, version and create vm.
// Installed as kubectl-virt it is also the kubectl plugin `kubectl virt ...`. Cluster access
// is kubectl's: $KUBECONFIG or ~/.kube/config, and the same --kubeconfig, --context,
// --namespace, ... flags.
package virtctl

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

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
		migrateCommand(cl), migrateCancelCommand(cl),
		softRebootCommand(cl),
		consoleCommand(cl), vncCommand(cl), exposeCommand(cl),
		portForwardCommand(cl), sshCommand(cl), scpCommand(cl),
		versionCommand(cl), createCommand(), expandCommand(cl),
	)
	root.AddCommand(pauseCommands(cl)...)
	root.AddCommand(guestAgentCommands(cl)...)
	return root
}
