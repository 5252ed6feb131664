package virtctl

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// createCommand is `virtctl create`: manifests printed for kubectl apply, never sent.
func createCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "create", Short: "Create a manifest (printed, not applied)"}
	cmd.AddCommand(createVMCommand(), createInstancetypeCommand(), createPreferenceCommand())
	return cmd
}

// vmOptions are `virtctl create vm`'s flags, with KubeVirt's names and defaults.
type vmOptions struct {
	name, runStrategy, instancetype, preference string
	gracePeriod                                 int64
	containerDisks, pvcs                        []string
	userData, networkData                       string
}

const cloudInitVolume = "cloudinitdisk" // KubeVirt's name for the volume

func createVMCommand() *cobra.Command {
	o := vmOptions{runStrategy: string(v1.RunStrategyAlways), gracePeriod: 180}
	cmd := &cobra.Command{
		Use:   "vm",
		Short: "Print a VirtualMachine manifest",
		Long: "Print a VirtualMachine manifest, to pipe into kubectl apply -f -.\n\n" +
			"Volumes boot in the order given (containerdisks first, then PVCs) unless bootorder says otherwise.",
		Example: `  virtctl create vm --name my-vm --instancetype u1.small --preference debian --volume-containerdisk src:vmctl/debian-guest:devel | kubectl apply -f -
  virtctl create vm --instancetype virtualmachineinstancetype/my-type --volume-pvc src:my-disk,bootorder:1
  virtctl create vm --volume-containerdisk src:my.registry/img:tag,name:root --cloud-init-user-data "$(base64 -w0 user-data.yaml)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vm, err := o.vm()
			if err != nil {
				return err
			}
			return printManifest(cmd, vm)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "the VM's name (default: vm-<random>)")
	f.StringVar(&o.runStrategy, "run-strategy", o.runStrategy, "the VM's run strategy: Always, Manual, Halted, Once or RerunOnFailure")
	f.Int64Var(&o.gracePeriod, "termination-grace-period", o.gracePeriod, "seconds the guest gets to shut down")
	f.StringVar(&o.instancetype, "instancetype", "", "the instance type: NAME (a VirtualMachineClusterInstancetype) or virtualmachineinstancetype/NAME")
	f.StringVar(&o.preference, "preference", "", "the preference: NAME (a VirtualMachineClusterPreference) or virtualmachinepreference/NAME")
	f.StringArrayVar(&o.containerDisks, "volume-containerdisk", nil, "a containerDisk volume, repeatable: src:IMAGE[,name:NAME][,bootorder:N]")
	f.StringArrayVar(&o.pvcs, "volume-pvc", nil, "a PVC used as a disk, repeatable: src:CLAIM[,name:NAME][,bootorder:N]")
	f.StringVar(&o.userData, "cloud-init-user-data", "", "base64-encoded cloud-init user data (a cloudInitNoCloud volume)")
	f.StringVar(&o.networkData, "cloud-init-network-data", "", "base64-encoded cloud-init network data (a cloudInitNoCloud volume)")
	f.SortFlags = false
	return cmd
}

// vm is the VirtualMachine the options describe. Every volume gets a disk, so the manifest
// runs as printed.
func (o vmOptions) vm() (*v1.VirtualMachine, error) {
	name := nameOr(o.name, "vm")
	strategy := v1.VirtualMachineRunStrategy(o.runStrategy)
	switch strategy {
	case v1.RunStrategyAlways, v1.RunStrategyManual, v1.RunStrategyHalted, v1.RunStrategyOnce, v1.RunStrategyRerunOnFailure:
	default:
		return nil, fmt.Errorf("--run-strategy: invalid run strategy %q, supported values are: Always, Manual, Halted, Once, RerunOnFailure", o.runStrategy)
	}
	if o.gracePeriod < 0 {
		return nil, fmt.Errorf("--termination-grace-period: must not be negative")
	}
	grace := o.gracePeriod
	vm := &v1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: &strategy,
			Template:    &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: &grace}},
		},
	}
	var err error
	if o.instancetype != "" {
		kind, n, e := kindAndName("--instancetype", o.instancetype, "virtualmachineinstancetype", "virtualmachineclusterinstancetype")
		vm.Spec.Instancetype, err = &v1.InstancetypeMatcher{Name: n, Kind: kind}, e
	}
	if o.preference != "" && err == nil {
		kind, n, e := kindAndName("--preference", o.preference, "virtualmachinepreference", "virtualmachineclusterpreference")
		vm.Spec.Preference, err = &v1.PreferenceMatcher{Name: n, Kind: kind}, e
	}
	if err != nil {
		return nil, err
	}
	if err := o.addVolumes(vm); err != nil {
		return nil, err
	}
	return vm, nil
}

// kindAndName splits KIND/NAME; the kind, when given, is one of kinds (KubeVirt's spelling:
// lower-case resource names). No kind means the cluster-wide one, the matchers' default.
func kindAndName(flag, value string, kinds ...string) (string, string, error) {
	kind, name, found := strings.Cut(value, "/")
	if !found {
		kind, name = "", value
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s: %q is not NAME or KIND/NAME", flag, value)
	}
	if found && kind != kinds[0] && kind != kinds[1] {
		return "", "", fmt.Errorf("%s: invalid kind %q, supported values are: %s", flag, kind, strings.Join(kinds, ", "))
	}
	return kind, name, nil
}
