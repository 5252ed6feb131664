// Command crd-versions adds extra served versions to generated CRDs, each a copy of the
// storage version's schema, so that older apiVersions of the same shape keep applying
// (conversion None: the objects are identical apart from apiVersion).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func main() {
	versions := pflag.StringSlice("also-serve", nil, "versions to serve with the storage version's schema")
	pflag.Parse()
	for _, file := range pflag.Args() {
		if err := addVersions(file, *versions); err != nil {
			fmt.Fprintf(os.Stderr, "crd-versions: %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}

func addVersions(file string, versions []string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return err
	}
	storage := storageVersion(&crd)
	if storage == nil {
		return fmt.Errorf("no storage version")
	}
	for _, name := range versions {
		extra := *storage.DeepCopy()
		extra.Name = name
		extra.Storage = false
		extra.Deprecated = true
		warning := fmt.Sprintf("%s/%s is deprecated; use %s/%s", crd.Spec.Group, name, crd.Spec.Group, storage.Name)
		extra.DeprecationWarning = &warning
		crd.Spec.Versions = append(crd.Spec.Versions, extra)
	}
	out, err := marshalWithoutServerFields(&crd)
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

// marshalWithoutServerFields drops the empty status and creationTimestamp that the typed
// struct always carries: the API server fills them, and they do not belong in a manifest.
func marshalWithoutServerFields(crd *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	return yaml.Marshal(obj)
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}
