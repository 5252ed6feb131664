package virtctl

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// migrateCommand is PUT migrate on the VM: virt-api creates a VirtualMachineInstanceMigration
// of its instance (202), or answers 409 with why the instance cannot migrate now.
func migrateCommand(cl *clientLoader) *cobra.Command {
	var nodeSelector map[string]string
	cmd := stateCommand(cl, "migrate", "Live-migrate a virtual machine to another node", func(*cobra.Command) (stateOptions, error) {
		return stateOptions{AddedNodeSelector: nodeSelector}, nil
	})
	cmd.Long = `Live-migrate the instance of a running VM to another node: the guest keeps running (no
reboot). Follow it with: kubectl get vmim -l ` + v1.MigrationSelectorLabel + `=VM`
	cmd.Flags().StringToStringVar(&nodeSelector, "addedNodeSelector", nil, "labels the target node must have, on top of the VM's own scheduling constraints (key=value,...)")
	return cmd
}

// migrateCancelCommand cancels the VM's migration in flight by deleting it, as KubeVirt's
// virtctl does: the controller then removes the target (or has the handlers abort the copy).
func migrateCancelCommand(cl *clientLoader) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate-cancel VM",
		Short: "Cancel the live migration of a virtual machine",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			name := args[0]
			client := c.Virt.KubevirtV1().VirtualMachineInstanceMigrations(c.Namespace)
			list, err := client.List(cmd.Context(), metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=" + name})
			if err != nil {
				return fmt.Errorf("migrate-cancel VM %s: %w", name, err)
			}
			for _, m := range list.Items {
				if m.Spec.VMIName != name || m.Status.Phase.IsFinal() || m.DeletionTimestamp != nil {
					continue
				}
				if err := client.Delete(cmd.Context(), m.Name, metav1.DeleteOptions{}); err != nil {
					return fmt.Errorf("migrate-cancel VM %s: deleting migration %s: %w", name, m.Name, err)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "VM %s was scheduled to migrate-cancel\n", name)
				return err
			}
			return fmt.Errorf("migrate-cancel VM %s: found no migration in flight to cancel", name)
		},
	}
}
