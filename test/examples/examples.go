// Package examples reads the manifests of examples/ as typed objects, so tests use exactly
// what users apply, adjusting a namespace or a toleration where they must.
package examples

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	virtscheme "github.com/vmctl/vmctl/client/clientset/versioned/scheme"
	"github.com/vmctl/vmctl/test/apiserver"
)

var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kubescheme.AddToScheme, virtscheme.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// Load decodes every document of examples/<name>.
func Load(name string) ([]runtime.Object, error) {
	root, err := apiserver.RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", name))
	if err != nil {
		return nil, err
	}
	objs, err := Decode(data, nil)
	if err != nil {
		return nil, fmt.Errorf("examples/%s: %w", name, err)
	}
	return objs, nil
}

// Decode decodes every document of a multi-document YAML stream whose kind keep accepts (nil:
// all); documents of other kinds need not be known to the decoder.
func Decode(data []byte, keep func(kind string) bool) ([]runtime.Object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if keep != nil {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				return nil, err
			}
			if !keep(meta.Kind) {
				continue
			}
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
}
