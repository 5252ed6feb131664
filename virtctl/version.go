package virtctl

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vmctl/vmctl/pkg/version"
)

// versionCommand prints virtctl's version and virt-api's (GET
// /apis/subresources.kubevirt.io/v1/version), each as KubeVirt's virtctl prints them.
func versionCommand(cl *clientLoader) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the client and server version information",
		Example: "  # The client's and the server's versions for the current context:\n  virtctl version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "Client Version: %#v\n", version.Get()); err != nil {
				return err
			}
			if clientOnly {
				return nil
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			raw, err := c.Subresources.Get().Resource("version").Do(cmd.Context()).Raw()
			if err != nil {
				return fmt.Errorf("the server's version: %w", err)
			}
			var server version.Info
			if err := json.Unmarshal(raw, &server); err != nil {
				return fmt.Errorf("the server's version: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Server Version: %#v\n", server)
			return err
		},
	}
	cmd.Flags().BoolVarP(&clientOnly, "client", "c", false, "client version only (no server required)")
	return cmd
}
