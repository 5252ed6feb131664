package virtctl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// guestAgentCommands print what a running instance's guest agent reports, as KubeVirt's
// virtctl guestosinfo, userlist and fslist print it: the subresource's JSON, indented. The
// instance must run with its guest agent connected (the AgentConnected condition).
func guestAgentCommands(cl *clientLoader) []*cobra.Command {
	return []*cobra.Command{
		guestAgentCommand(cl, "guestosinfo", handlerapi.GuestOSInfo, "Return guest agent info about the operating system",
			"the guest's OS, kernel, hostname, timezone, logged-in users and file systems"),
		guestAgentCommand(cl, "userlist", handlerapi.UserList, "Return the list of users logged in to the guest",
			"the users logged in to the guest"),
		guestAgentCommand(cl, "fslist", handlerapi.FileSystemList, "Return the list of file systems of the guest",
			"the guest's mounted file systems, their type and use"),
	}
}

func guestAgentCommand(cl *clientLoader, use string, q handlerapi.Query, short, what string) *cobra.Command {
	return &cobra.Command{
		Use:     use + " VMI",
		Short:   short,
		Long:    "Prints " + what + ", as the guest agent (qemu-guest-agent) in the guest reports them, as JSON.",
		Example: fmt.Sprintf("  # What the guest agent of the instance myvmi reports:\n  virtctl %s myvmi", use),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			res := c.Subresources.Get().Namespace(c.Namespace).Resource("virtualmachineinstances").Name(args[0]).
				SubResource(string(q)).Do(cmd.Context())
			// Error, not Raw's error: it reads the server's Status (such as "VMI does not have
			// guest agent connected").
			if err := res.Error(); err != nil {
				return fmt.Errorf("%s of VMI %s: %w", use, args[0], err)
			}
			raw, _ := res.Raw()
			var out bytes.Buffer
			if err := json.Indent(&out, bytes.TrimSpace(raw), "", "  "); err != nil {
				return fmt.Errorf("%s of VMI %s: %w", use, args[0], err)
			}
			out.WriteByte('\n')
			_, err = cmd.OutOrStdout().Write(out.Bytes())
			return err
		},
	}
}
