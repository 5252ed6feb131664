package virtctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// expandCommand prints a VM with its instance type and preference applied to its template, as
// KubeVirt's virtctl expand does: of a VM in the cluster (--vm, the expand-spec subresource)
// or of one in a file (--file, expand-vm-spec), in YAML or JSON.
func expandCommand(cl *clientLoader) *cobra.Command {
	var vmName, file, output string
	cmd := &cobra.Command{
		Use:   "expand (--vm NAME | --file FILE)",
		Short: "Return the VirtualMachine with its instancetype and preference expanded",
		Long: "Prints the VirtualMachine as it runs: its instance type and preference applied to its " +
			"template and both removed, so the output creates the same guest without them.",
		Example: "  # The VM vm1 with its instance type expanded:\n  virtctl expand --vm vm1\n" +
			"  # A VM not created yet, as JSON:\n  virtctl expand --file vm.yaml --output json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (vmName == "") == (file == "") {
				return fmt.Errorf("give exactly one of --vm and --file")
			}
			if output != "yaml" && output != "json" {
				return fmt.Errorf("--output %q: want yaml or json", output)
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			req := c.Subresources.Get().Namespace(c.Namespace).Resource("virtualmachines").Name(vmName).SubResource("expand-spec")
			if file != "" {
				body, err := readManifest(file)
				if err != nil {
					return err
				}
				req = c.Subresources.Put().Namespace(c.Namespace).Resource("expand-vm-spec").
					SetHeader("Content-Type", "application/json").Body(body)
			}
			res := req.Do(cmd.Context())
			// Error, not Raw's error: it reads the server's Status (such as "not found").
			if err := res.Error(); err != nil {
				return fmt.Errorf("expand: %w", err)
			}
			raw, _ := res.Raw()
			return printObject(cmd, raw, output)
		},
	}
	cmd.Flags().StringVar(&vmName, "vm", "", "the VirtualMachine to expand, in the namespace")
	cmd.Flags().StringVarP(&file, "file", "f", "", "a file holding a VirtualMachine (YAML or JSON) to expand")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "the output format: yaml or json")
	return cmd
}

// readManifest reads a YAML or JSON file as JSON.
func readManifest(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	body, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return body, nil
}

// printObject prints a JSON object as YAML or indented JSON.
func printObject(cmd *cobra.Command, raw []byte, output string) error {
	var out []byte
	if output == "yaml" {
		y, err := yaml.JSONToYAML(raw)
		if err != nil {
			return err
		}
		out = y
	} else {
		var b bytes.Buffer
		if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		out = b.Bytes()
	}
	_, err := cmd.OutOrStdout().Write(out)
	return err
}
