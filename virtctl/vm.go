package virtctl

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stateOptions is the body of PUT start, stop, restart and migrate, with KubeVirt's field
// names: start takes paused, stop gracePeriod, restart gracePeriodSeconds, migrate
// addedNodeSelector; all take dryRun.
type stateOptions struct {
	Paused             bool              `json:"paused,omitempty"`
	GracePeriod        *int64            `json:"gracePeriod,omitempty"`
	GracePeriodSeconds *int64            `json:"gracePeriodSeconds,omitempty"`
	DryRun             []string          `json:"dryRun,omitempty"`
	AddedNodeSelector  map[string]string `json:"addedNodeSelector,omitempty"`
}

// stateCommand is start, stop, restart or migrate: PUT on the VM's subresource. virt-api answers 202
// when the request is taken (the controller then acts) and 409 with the reason when the run
// strategy or a pending request forbids it; the error names both. --dry-run has virt-api
// check the request, its writes included, and change nothing.
func stateCommand(cl *clientLoader, verb, short string, opts func(cmd *cobra.Command) (stateOptions, error)) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   verb + " VM",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := opts(cmd)
			if err != nil {
				return err
			}
			if dryRun {
				body.DryRun = []string{metav1.DryRunAll}
				if _, err := fmt.Fprintln(cmd.OutOrStdout(), "Dry Run execution"); err != nil {
					return err
				}
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			data, err := json.Marshal(body)
			if err != nil {
				return err
			}
			err = c.Subresources.Put().Namespace(c.Namespace).Resource("virtualmachines").Name(args[0]).
				SubResource(verb).Body(data).SetHeader("Content-Type", "application/json").Do(cmd.Context()).Error()
			if err != nil {
				return fmt.Errorf("%s VM %s: %w", verb, args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "VM %s was scheduled to %s\n", args[0], verb)
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the request with virt-api without carrying it out")
	return cmd
}

func startCommand(cl *clientLoader) *cobra.Command {
	var paused *bool
	cmd := stateCommand(cl, "start", "Start a virtual machine", func(*cobra.Command) (stateOptions, error) {
		return stateOptions{Paused: *paused}, nil
	})
	paused = cmd.Flags().Bool("paused", false, "start the guest paused (the VM shows Paused); virtctl unpause vm lets it run")
	return cmd
}

// forceFlags are stop's and restart's --force and --grace-period: a grace period shortens the
// guest's shutdown by deleting its launcher pod with it, which is forceful, so it needs --force.
func forceFlags(cmd *cobra.Command) (force *bool, grace *int64) {
	force = cmd.Flags().Bool("force", false, "delete the launcher pod with --grace-period instead of waiting for the guest to shut down")
	grace = cmd.Flags().Int64("grace-period", -1, "seconds the guest gets to shut down (with --force); 0 kills it at once")
	return force, grace
}

func graceOption(cmd *cobra.Command, force bool, grace int64) (*int64, error) {
	if !cmd.Flags().Changed("grace-period") {
		if force {
			return nil, fmt.Errorf("--force needs --grace-period")
		}
		return nil, nil
	}
	if !force {
		return nil, fmt.Errorf("--grace-period needs --force")
	}
	if grace < 0 {
		return nil, fmt.Errorf("--grace-period %d: must be 0 or more", grace)
	}
	return &grace, nil
}

func stopCommand(cl *clientLoader) *cobra.Command {
	var force *bool
	var grace *int64
	cmd := stateCommand(cl, "stop", "Stop a virtual machine", func(cmd *cobra.Command) (stateOptions, error) {
		g, err := graceOption(cmd, *force, *grace)
		return stateOptions{GracePeriod: g}, err
	})
	force, grace = forceFlags(cmd)
	return cmd
}

func restartCommand(cl *clientLoader) *cobra.Command {
	var force *bool
	var grace *int64
	cmd := stateCommand(cl, "restart", "Restart a virtual machine", func(cmd *cobra.Command) (stateOptions, error) {
		g, err := graceOption(cmd, *force, *grace)
		return stateOptions{GracePeriodSeconds: g}, err
	})
	force, grace = forceFlags(cmd)
	return cmd
}
