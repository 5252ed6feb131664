package virtctl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// Resource kinds pause and unpause take, as KubeVirt's virtctl names them.
const (
	kindVM  = "vm"
	kindVMI = "vmi"
)

// targetKind reads pause's and unpause's first argument: virtualmachine (vm) or
// virtualmachineinstance (vmi), case-insensitive, singular or plural.
func targetKind(arg string) (string, error) {
	switch strings.ToLower(arg) {
	case "vm", "vms", "virtualmachine", "virtualmachines":
		return kindVM, nil
	case "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		return kindVMI, nil
	}
	return "", fmt.Errorf("unknown resource type %q: use vm (virtualmachine) or vmi (virtualmachineinstance)", arg)
}

// pauseCommand is pause or unpause: PUT on the instance's subresource, which virt-api forwards
// to the virt-handler of its node. KubeVirt has no VM pause: `pause vm NAME` pauses the VM's
// instance (same name).
func pauseCommand(cl *clientLoader, op handlerapi.Operation, short, long string) *cobra.Command {
	var dryRun bool
	verb := string(op)
	cmd := &cobra.Command{
		Use:   verb + " vm|vmi NAME",
		Short: short,
		Long: long + `

The first argument is the resource type, virtualmachine (vm) or virtualmachineinstance (vmi),
case-insensitive, singular or plural; the second its name.`,
		Example: fmt.Sprintf("  # %s the instance of the VM myvm:\n  virtctl %s vm myvm", strings.ToUpper(verb[:1])+verb[1:], verb),
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := targetKind(args[0])
			if err != nil {
				return err
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			body := []byte("{}")
			if dryRun {
				if _, err := fmt.Fprintln(cmd.OutOrStdout(), "Dry Run execution"); err != nil {
					return err
				}
				body, _ = json.Marshal(map[string][]string{"dryRun": {metav1.DryRunAll}})
			}
			name := args[1]
			var vm *v1.VirtualMachine
			if kind == kindVM {
				if vm, err = c.Virt.KubevirtV1().VirtualMachines(c.Namespace).Get(cmd.Context(), name, metav1.GetOptions{}); err != nil {
					return fmt.Errorf("getting VirtualMachine %s: %w", name, err)
				}
			}
			err = putInstance(cmd, c, name, op, body)
			if apierrors.IsNotFound(err) && vm != nil {
				if s, _ := vm.Spec.EffectiveRunStrategy(); s == v1.RunStrategyHalted {
					return fmt.Errorf("%s VMI %s: VirtualMachine %s is not set to run (runStrategy Halted)", verb, name, name)
				}
				return fmt.Errorf("%s VMI %s: VirtualMachine %s has no instance running: %w", verb, name, name, err)
			}
			if err != nil {
				return fmt.Errorf("%s VMI %s: %w", verb, name, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "VMI %s was scheduled to %s\n", name, verb)
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the request with virt-api without carrying it out")
	return cmd
}

// putInstance sends PUT op on the instance name with body (nil: none).
func putInstance(cmd *cobra.Command, c *clients, name string, op handlerapi.Operation, body []byte) error {
	req := c.Subresources.Put().Namespace(c.Namespace).Resource("virtualmachineinstances").Name(name).SubResource(string(op))
	if body != nil {
		req = req.Body(body).SetHeader("Content-Type", "application/json")
	}
	return req.Do(cmd.Context()).Error()
}

func pauseCommands(cl *clientLoader) []*cobra.Command {
	return []*cobra.Command{
		pauseCommand(cl, handlerapi.Pause, "Pause a virtual machine",
			"Pauses a virtual machine by freezing it: its vCPUs stop, its memory is kept (libvirt's suspend).\n"+
				"The instance stays Running with the condition Paused; the VM shows Paused."),
		pauseCommand(cl, handlerapi.Unpause, "Unpause a virtual machine",
			"Unpauses a paused virtual machine: its vCPUs run again where they stopped."),
	}
}

// softRebootCommand presses the guest's ACPI power button with libvirt's reboot flag: the
// guest shuts down as it would on a stop, and QEMU starts it again in the same pod. A guest
// that ignores the button does not reboot.
func softRebootCommand(cl *clientLoader) *cobra.Command {
	return &cobra.Command{
		Use:   "soft-reboot NAME",
		Short: "Soft reboot a virtual machine instance",
		Long: `Soft reboots a virtual machine instance: the guest gets the ACPI power button, shuts down
and is started again in the same launcher pod. The guest must react to the button (acpid,
systemd-logind); a paused instance is refused.`,
		Example: "  # Soft reboot the instance myvmi:\n  virtctl soft-reboot myvmi",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			if err := putInstance(cmd, c, args[0], handlerapi.SoftReboot, nil); err != nil {
				return fmt.Errorf("soft-reboot VMI %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "VMI %s was scheduled to soft-reboot\n", args[0])
			return err
		},
	}
}
