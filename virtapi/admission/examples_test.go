package admission

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/instancetype"
	"github.com/vmctl/vmctl/test/kubevirtexamples"
)

func TestKubeVirtExamples(t *testing.T) {
	limits := DefaultLimits()
	limits.Instancetypes = exampleTypes(t)
	limits.HostDisk, limits.Sidecar, limits.DownwardMetrics = true, true, true // as the local cluster's virt-api (kubevirtexamples.Outcomes)
	for file, want := range kubevirtexamples.Outcomes {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(kubevirtexamples.Dir("../.."), file))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, doc := range bytes.Split(data, []byte("\n---")) {
				if msg := admitExample(t, doc, limits); msg != "" {
					got = msg
				}
			}
			switch {
			case want == "" && got != "":
				t.Fatalf("refused: %s", got)
			case want != "" && !strings.Contains(got, want):
				t.Fatalf("got %q; want a refusal naming %q", got, want)
			}
		})
	}
}

// admitExample is what kubectl's strict validation and virt-api do to one YAML document of
// a VM, VMI or replica set: "" if it is accepted, else why not.
func admitExample(t *testing.T, doc []byte, limits Limits) string {
	var meta struct{ APIVersion, Kind string }
	if yaml.Unmarshal(doc, &meta) != nil || meta.APIVersion != v1.SchemeGroupVersion.String() {
		return ""
	}
	var obj any
	resource := map[string]string{"VirtualMachine": VirtualMachines, "VirtualMachineInstance": VirtualMachineInstances,
		"VirtualMachineInstanceReplicaSet": ReplicaSets}[meta.Kind]
	switch meta.Kind {
	case "VirtualMachine":
		obj = &v1.VirtualMachine{}
	case "VirtualMachineInstance":
		obj = &v1.VirtualMachineInstance{}
	case "VirtualMachineInstanceReplicaSet":
		obj = &v1.VirtualMachineInstanceReplicaSet{}
	default:
		return ""
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return strictMessage(err.Error())
	}
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if resp := Mutate(review(resource, admissionv1.Create, raw)); resp.Patch != nil {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = p.Apply(raw); err != nil {
			t.Fatal(err)
		}
	}
	if resp := Validate(review(resource, admissionv1.Create, raw), limits); !resp.Allowed {
		return resp.Result.Message
	}
	return ""
}

// exampleTypes serves the examples' instance types and preferences (kubevirtexamples.Types),
// which the instance-typed VMs name, from a fake clientset.
func exampleTypes(t *testing.T) instancetype.Getter {
	var objs []runtime.Object
	for _, file := range kubevirtexamples.Types {
		data, err := os.ReadFile(filepath.Join(kubevirtexamples.Dir("../.."), file))
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(data, &meta); err != nil {
			t.Fatal(err)
		}
		obj := map[string]runtime.Object{
			"VirtualMachineInstancetype":        &itv1beta1.VirtualMachineInstancetype{},
			"VirtualMachineClusterInstancetype": &itv1beta1.VirtualMachineClusterInstancetype{},
			"VirtualMachinePreference":          &itv1beta1.VirtualMachinePreference{},
			"VirtualMachineClusterPreference":   &itv1beta1.VirtualMachineClusterPreference{},
		}[meta.Kind]
		if obj == nil {
			t.Fatalf("%s: kind %q", file, meta.Kind)
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		objs = append(objs, obj)
	}
	return instancetype.ClientGetter{Virt: fake.NewSimpleClientset(objs...), Kube: kubefake.NewSimpleClientset(), Timeout: time.Second}
}

// strictMessage shortens a strict-decoding error to unknown field "name".
func strictMessage(err string) string {
	_, field, found := strings.Cut(err, `unknown field "`)
	if !found {
		return err
	}
	field, _, _ = strings.Cut(field, `"`)
	return `unknown field "` + field + `"`
}
