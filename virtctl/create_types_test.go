package virtctl

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// createPrinted runs `virtctl create ARGS` and gives what it printed.
func createPrinted(args ...string) (string, error) {
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"create"}, args...))
	err := root.Execute()
	return out.String(), err
}

// typed is a printed manifest: its kind and name, and its spec decoded strictly as the
// instance type or preference its kind says (cluster-wide kinds have the same schema).
type typed struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Instancetype itv1beta1.VirtualMachineInstancetypeSpec `json:"-"`
	Preference   itv1beta1.VirtualMachinePreferenceSpec   `json:"-"`
}

func decodeCreated(t *testing.T, out string) typed {
	t.Helper()
	var got typed
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.HasSuffix(got.Kind, "Instancetype") {
		var it itv1beta1.VirtualMachineInstancetype
		if err := yaml.UnmarshalStrict([]byte(out), &it); err != nil {
			t.Fatalf("not an instance type: %v\n%s", err, out)
		}
		got.Instancetype = it.Spec
	} else {
		var p itv1beta1.VirtualMachinePreference
		if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
			t.Fatalf("not a preference: %v\n%s", err, out)
		}
		got.Preference = p.Spec
	}
	return got
}

func TestCreateInstancetypeAndPreference(t *testing.T) {
	tests := []struct {
		args  []string
		check func(t *testing.T, got typed)
	}{
		{[]string{"instancetype", "--cpu", "2", "--memory", "256Mi"}, func(t *testing.T, got typed) {
			if got.Kind != "VirtualMachineClusterInstancetype" || !strings.HasPrefix(got.Metadata.Name, "instancetype-") {
				t.Errorf("kind %s name %s, want a cluster instance type named instancetype-<random>", got.Kind, got.Metadata.Name)
			}
			if got.Instancetype.CPU.Guest != 2 || !got.Instancetype.Memory.Guest.Equal(resource.MustParse("256Mi")) || got.Instancetype.IOThreadsPolicy != nil {
				t.Errorf("spec %+v", got.Instancetype)
			}
		}},
		{[]string{"instancetype", "--namespaced", "--name", "small", "--cpu", "1", "--memory", "1Gi", "--iothreadspolicy", "auto"}, func(t *testing.T, got typed) {
			if got.Kind != "VirtualMachineInstancetype" || got.Metadata.Name != "small" || *got.Instancetype.IOThreadsPolicy != v1.IOThreadsPolicyAuto {
				t.Errorf("kind %s name %s spec %+v", got.Kind, got.Metadata.Name, got.Instancetype)
			}
		}},
		{[]string{"preference"}, func(t *testing.T, got typed) {
			if got.Kind != "VirtualMachineClusterPreference" || !strings.HasPrefix(got.Metadata.Name, "preference-") || got.Preference.CPU != nil {
				t.Errorf("kind %s name %s spec %+v", got.Kind, got.Metadata.Name, got.Preference)
			}
		}},
		{[]string{"preference", "--namespaced", "--name", "linux", "--cpu-topology", "preferCores", "--machine-type", "q35", "--volume-storage-class", "local"}, func(t *testing.T, got typed) {
			p := got.Preference
			if got.Kind != "VirtualMachinePreference" || *p.CPU.PreferredCPUTopology != itv1beta1.DeprecatedPreferCores ||
				p.Machine.PreferredMachineType != "q35" || p.Volumes.PreferredStorageClassName != "local" {
				t.Errorf("kind %s spec %+v", got.Kind, p)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := createPrinted(tt.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			tt.check(t, decodeCreated(t, out))
		})
	}
}

func TestCreateInstancetypeAndPreferenceRefusals(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"instancetype", "--memory", "1Gi"}, "--cpu: the number of vCPUs is required"},
		{[]string{"instancetype", "--cpu", "1"}, `--memory: "" is not a quantity`},
		{[]string{"instancetype", "--cpu", "1", "--memory", "lots"}, `--memory: "lots" is not a quantity`},
		{[]string{"instancetype", "--cpu", "1", "--memory", "1Gi", "--iothreadspolicy", "many"}, `invalid policy "many"`},
		{[]string{"preference", "--cpu-topology", "cubes"}, `--cpu-topology: invalid topology "cubes"`},
	} {
		if out, err := createPrinted(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q\n%s", tt.args, err, tt.want, out)
		}
	}
}
