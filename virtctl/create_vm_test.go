package virtctl

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// createVM runs `virtctl create vm ARGS` and decodes what it printed.
func createVM(t *testing.T, args ...string) (*v1.VirtualMachine, error) {
	t.Helper()
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"create", "vm"}, args...))
	if err := root.Execute(); err != nil {
		return nil, err
	}
	vm := &v1.VirtualMachine{}
	if err := yaml.UnmarshalStrict(out.Bytes(), vm); err != nil {
		t.Fatalf("output is not a VirtualMachine: %v\n%s", err, out.String())
	}
	return vm, nil
}

func TestCreateVM(t *testing.T) {
	disk := func(name string, order *uint) v1.Disk { return v1.Disk{Name: name, BootOrder: order} }
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, vm *v1.VirtualMachine)
	}{
		{"defaults", nil, func(t *testing.T, vm *v1.VirtualMachine) {
			if !strings.HasPrefix(vm.Name, "vm-") || len(vm.Name) != 8 || vm.APIVersion != "kubevirt.io/v1" || vm.Kind != "VirtualMachine" {
				t.Errorf("name %q apiVersion %q kind %q", vm.Name, vm.APIVersion, vm.Kind)
			}
			if *vm.Spec.RunStrategy != v1.RunStrategyAlways || *vm.Spec.Template.Spec.TerminationGracePeriodSeconds != 180 {
				t.Errorf("run strategy %s grace %d, want KubeVirt's Always and 180", *vm.Spec.RunStrategy, *vm.Spec.Template.Spec.TerminationGracePeriodSeconds)
			}
			if vm.Spec.Instancetype != nil || vm.Spec.Preference != nil || len(vm.Spec.Template.Spec.Volumes) != 0 {
				t.Errorf("spec %+v, want no matchers and no volumes", vm.Spec)
			}
		}},
		{"cluster instance type and preference", []string{"--name", "web", "--instancetype", "u1.small", "--preference", "fedora"}, func(t *testing.T, vm *v1.VirtualMachine) {
			if vm.Name != "web" || *vm.Spec.Instancetype != (v1.InstancetypeMatcher{Name: "u1.small"}) || *vm.Spec.Preference != (v1.PreferenceMatcher{Name: "fedora"}) {
				t.Errorf("name %s instancetype %+v preference %+v", vm.Name, vm.Spec.Instancetype, vm.Spec.Preference)
			}
		}},
		{"namespaced kinds", []string{"--instancetype", "virtualmachineinstancetype/mine", "--preference", "virtualmachinepreference/p"}, func(t *testing.T, vm *v1.VirtualMachine) {
			if vm.Spec.Instancetype.Kind != "virtualmachineinstancetype" || vm.Spec.Instancetype.Name != "mine" || vm.Spec.Preference.Kind != "virtualmachinepreference" {
				t.Errorf("instancetype %+v preference %+v", vm.Spec.Instancetype, vm.Spec.Preference)
			}
			if v1.InstancetypeKindOf(vm.Spec.Instancetype.Kind) != v1.InstancetypeKind {
				t.Error("the API does not read the kind virtctl writes")
			}
		}},
		{"volumes, each with its disk", []string{"--name", "v",
			"--volume-containerdisk", "src:example/img:tag", "--volume-containerdisk", "src:other,name:data,bootorder:2",
			"--volume-pvc", "src:claim,bootorder:1", "--cloud-init-user-data", "I2Nsb3VkLWNvbmZpZwo="}, func(t *testing.T, vm *v1.VirtualMachine) {
			s := vm.Spec.Template.Spec
			wantDisks := []v1.Disk{disk("v-containerdisk-0", nil), disk("data", ptr.To[uint](2)), disk("claim", ptr.To[uint](1)), disk("cloudinitdisk", nil)}
			if !equality.Semantic.DeepEqual(s.Domain.Devices.Disks, wantDisks) {
				t.Errorf("disks %+v, want %+v", s.Domain.Devices.Disks, wantDisks)
			}
			if s.Volumes[0].ContainerDisk.Image != "example/img:tag" || s.Volumes[2].PersistentVolumeClaim.ClaimName != "claim" ||
				s.Volumes[3].CloudInitNoCloud.UserDataBase64 != "I2Nsb3VkLWNvbmZpZwo=" {
				t.Errorf("volumes %+v", s.Volumes)
			}
		}},
		{"run strategy and grace period", []string{"--run-strategy", "Halted", "--termination-grace-period", "0"}, func(t *testing.T, vm *v1.VirtualMachine) {
			if *vm.Spec.RunStrategy != v1.RunStrategyHalted || *vm.Spec.Template.Spec.TerminationGracePeriodSeconds != 0 {
				t.Errorf("run strategy %s grace %d", *vm.Spec.RunStrategy, *vm.Spec.Template.Spec.TerminationGracePeriodSeconds)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm, err := createVM(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, vm)
		})
	}
}

func TestCreateVMRefusals(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--run-strategy", "Sometimes"}, `invalid run strategy "Sometimes"`},
		{[]string{"--instancetype", "flavor/x"}, `--instancetype: invalid kind "flavor"`},
		{[]string{"--preference", "virtualmachinepreference/"}, `--preference: "virtualmachinepreference/" is not NAME or KIND/NAME`},
		{[]string{"--volume-containerdisk", "name:x"}, "--volume-containerdisk: src must be specified"},
		{[]string{"--volume-containerdisk", "src:a,size:1Gi"}, "unknown param(s): size:1Gi"},
		{[]string{"--volume-containerdisk", "src:a,bootorder:0"}, "bootorder must be an integer greater than 0"},
		{[]string{"--volume-containerdisk", "src:a,name:d", "--volume-pvc", "src:d"}, `there is already a volume named "d"`},
		{[]string{"--volume-containerdisk", "src:a,bootorder:1", "--volume-pvc", "src:d,bootorder:1"}, "bootorder 1 is already"},
		{[]string{"--volume-pvc", "ns/claim"}, "not key:value"},
		{[]string{"--volume-pvc", "src:ns/claim"}, "not allowed to specify the namespace"},
		{[]string{"--cloud-init-user-data", "#cloud-config"}, "--cloud-init-user-data: not base64"},
		{[]string{"--termination-grace-period", "-1"}, "must not be negative"},
	} {
		if _, err := createVM(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}
