package virtctl

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// printManifest writes obj as YAML, for kubectl apply -f -.
func printManifest(cmd *cobra.Command, obj runtime.Object) error {
	out, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// typeMeta is the TypeMeta of an instancetype.kubevirt.io kind.
func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: itv1beta1.SchemeGroupVersion.String(), Kind: kind}
}

// instancetypeOptions are `virtctl create instancetype`'s flags, with KubeVirt's names.
type instancetypeOptions struct {
	name, memory, ioThreadsPolicy string
	cpu                           uint32
	namespaced                    bool
}

func createInstancetypeCommand() *cobra.Command {
	o := instancetypeOptions{}
	cmd := &cobra.Command{
		Use:   "instancetype",
		Short: "Print a VirtualMachineClusterInstancetype (or, --namespaced, VirtualMachineInstancetype) manifest",
		Example: `  virtctl create instancetype --cpu 2 --memory 256Mi --name small | kubectl apply -f -
  virtctl create instancetype --namespaced --cpu 1 --memory 1Gi --iothreadspolicy auto`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := o.spec()
			if err != nil {
				return err
			}
			meta := metav1.ObjectMeta{Name: nameOr(o.name, "instancetype")}
			if o.namespaced {
				return printManifest(cmd, &itv1beta1.VirtualMachineInstancetype{TypeMeta: typeMeta("VirtualMachineInstancetype"), ObjectMeta: meta, Spec: spec})
			}
			return printManifest(cmd, &itv1beta1.VirtualMachineClusterInstancetype{TypeMeta: typeMeta("VirtualMachineClusterInstancetype"), ObjectMeta: meta, Spec: spec})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "the instance type's name (default: instancetype-<random>)")
	f.BoolVar(&o.namespaced, "namespaced", false, "a VirtualMachineInstancetype, in a namespace, instead of a cluster-wide one")
	f.Uint32Var(&o.cpu, "cpu", 0, "the guest's vCPUs (required)")
	f.StringVar(&o.memory, "memory", "", "the guest's memory, e.g. 256Mi (required)")
	f.StringVar(&o.ioThreadsPolicy, "iothreadspolicy", "", "the disks' I/O thread policy: shared, auto or supplementalPool")
	f.SortFlags = false
	return cmd
}

func (o instancetypeOptions) spec() (itv1beta1.VirtualMachineInstancetypeSpec, error) {
	var spec itv1beta1.VirtualMachineInstancetypeSpec
	if o.cpu == 0 {
		return spec, fmt.Errorf("--cpu: the number of vCPUs is required and must be greater than 0")
	}
	memory, err := resource.ParseQuantity(o.memory)
	if err != nil || memory.Sign() <= 0 {
		return spec, fmt.Errorf("--memory: %q is not a quantity of memory greater than 0 (e.g. 256Mi)", o.memory)
	}
	spec.CPU.Guest, spec.Memory.Guest = o.cpu, memory
	if o.ioThreadsPolicy != "" {
		policy := v1.IOThreadsPolicy(o.ioThreadsPolicy)
		if !slices.Contains([]v1.IOThreadsPolicy{v1.IOThreadsPolicyShared, v1.IOThreadsPolicyAuto, v1.IOThreadsPolicySupplementalPool}, policy) {
			return spec, fmt.Errorf("--iothreadspolicy: invalid policy %q, supported values are: shared, auto, supplementalPool", o.ioThreadsPolicy)
		}
		spec.IOThreadsPolicy = &policy
	}
	return spec, nil
}

// preferenceOptions are `virtctl create preference`'s flags, with KubeVirt's names.
type preferenceOptions struct {
	name, cpuTopology, machineType, storageClass string
	namespaced                                   bool
}

func createPreferenceCommand() *cobra.Command {
	o := preferenceOptions{}
	cmd := &cobra.Command{
		Use:   "preference",
		Short: "Print a VirtualMachineClusterPreference (or, --namespaced, VirtualMachinePreference) manifest",
		Example: `  virtctl create preference --name linux --cpu-topology cores --machine-type q35 | kubectl apply -f -
  virtctl create preference --namespaced --volume-storage-class local`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := o.spec()
			if err != nil {
				return err
			}
			meta := metav1.ObjectMeta{Name: nameOr(o.name, "preference")}
			if o.namespaced {
				return printManifest(cmd, &itv1beta1.VirtualMachinePreference{TypeMeta: typeMeta("VirtualMachinePreference"), ObjectMeta: meta, Spec: spec})
			}
			return printManifest(cmd, &itv1beta1.VirtualMachineClusterPreference{TypeMeta: typeMeta("VirtualMachineClusterPreference"), ObjectMeta: meta, Spec: spec})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "the preference's name (default: preference-<random>)")
	f.BoolVar(&o.namespaced, "namespaced", false, "a VirtualMachinePreference, in a namespace, instead of a cluster-wide one")
	f.StringVar(&o.cpuTopology, "cpu-topology", "", "how the instance type's vCPUs are shown to the guest: sockets, cores, threads, spread or any")
	f.StringVar(&o.machineType, "machine-type", "", "the preferred machine type, e.g. q35")
	f.StringVar(&o.storageClass, "volume-storage-class", "", "the preferred storage class of the VM's volumes")
	f.SortFlags = false
	return cmd
}

func (o preferenceOptions) spec() (itv1beta1.VirtualMachinePreferenceSpec, error) {
	var spec itv1beta1.VirtualMachinePreferenceSpec
	if o.cpuTopology != "" {
		topology := itv1beta1.PreferredCPUTopology(o.cpuTopology)
		if !slices.Contains(cpuTopologies, topology) {
			return spec, fmt.Errorf("--cpu-topology: invalid topology %q, supported values are: %v", o.cpuTopology, cpuTopologies)
		}
		spec.CPU = &itv1beta1.CPUPreferences{PreferredCPUTopology: &topology}
	}
	if o.machineType != "" {
		spec.Machine = &itv1beta1.MachinePreferences{PreferredMachineType: o.machineType}
	}
	if o.storageClass != "" {
		spec.Volumes = &itv1beta1.VolumePreferences{PreferredStorageClassName: o.storageClass}
	}
	return spec, nil
}

// cpuTopologies are the preferred topologies, current spellings and KubeVirt's older ones.
var cpuTopologies = []itv1beta1.PreferredCPUTopology{
	itv1beta1.Sockets, itv1beta1.Cores, itv1beta1.Threads, itv1beta1.Spread, itv1beta1.Any,
	itv1beta1.DeprecatedPreferSockets, itv1beta1.DeprecatedPreferCores, itv1beta1.DeprecatedPreferThreads,
	itv1beta1.DeprecatedPreferSpread, itv1beta1.DeprecatedPreferAny,
}

// nameOr is name, or prefix-<random> when none was given, as KubeVirt names them.
func nameOr(name, prefix string) string {
	if name != "" {
		return name
	}
	return prefix + "-" + rand.String(5)
}
