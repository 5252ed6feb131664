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

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kubescheme "k8s.io/client-go/kubernetes/scheme"

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
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("examples/%s: %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("examples/%s: %w", name, err)
		}
		objs = append(objs, obj)
	}
}
