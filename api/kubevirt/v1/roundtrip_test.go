package v1

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"
	"sigs.k8s.io/yaml"
)

// TestRoundTripFuzzed fills every type with random values and checks that JSON encoding and
// decoding gives back the same object: no field is lost or renamed on the way.
func TestRoundTripFuzzed(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	quantities := func(codecs serializer.CodecFactory) []any {
		return []any{func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<40), resource.BinarySI)
		}}
	}
	fuzzer := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, quantities), rand.NewSource(rand.Int63()), codecs)
	roundtrip.RoundTripExternalTypesWithoutProtobuf(t, scheme, codecs, fuzzer, nil)
}

// TestExamplesRoundTrip decodes every manifest in examples/ strictly (an unknown or misspelled
// field fails) and checks that encoding it again gives back the same document.
func TestExamplesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	kinds := map[string]func() any{
		"VirtualMachine":                   func() any { return &VirtualMachine{} },
		"VirtualMachineInstance":           func() any { return &VirtualMachineInstance{} },
		"VirtualMachineInstanceReplicaSet": func() any { return &VirtualMachineInstanceReplicaSet{} },
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range bytes.Split(data, []byte("\n---\n")) {
				var original map[string]any
				if err := yaml.Unmarshal(doc, &original); err != nil {
					t.Fatal(err)
				}
				newObject, ok := kinds[original["kind"].(string)]
				if !ok {
					continue
				}
				typed := newObject()
				if err := yaml.UnmarshalStrict(doc, typed); err != nil {
					t.Fatalf("strict decode: %v", err)
				}
				encoded, err := yaml.Marshal(typed)
				if err != nil {
					t.Fatal(err)
				}
				var again map[string]any
				if err := yaml.Unmarshal(encoded, &again); err != nil {
					t.Fatal(err)
				}
				dropServerDefaults(again)
				dropServerDefaults(original)
				if diff := cmp.Diff(original, again); diff != "" {
					t.Errorf("round trip changed the manifest (-file +encoded):\n%s", diff)
				}
			}
		})
	}
}

// dropServerDefaults removes what encoding a Go struct always writes (null timestamps and
// empty status) so only real differences remain.
func dropServerDefaults(obj map[string]any) {
	delete(obj, "status")
	for _, meta := range []map[string]any{nested(obj, "metadata"), nested(obj, "spec", "template", "metadata")} {
		if meta != nil && meta["creationTimestamp"] == nil {
			delete(meta, "creationTimestamp")
		}
	}
}

func nested(obj map[string]any, path ...string) map[string]any {
	for _, key := range path {
		next, _ := obj[key].(map[string]any)
		if next == nil {
			return nil
		}
		obj = next
	}
	return obj
}
