package apiserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// InstallCRDs creates (or updates) every CRD in the project's crds/ folder and waits until
// each is Established and served.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	// kubevirt.io_*, instancetype.kubevirt.io_* and migrations.kubevirt.io_*; not kustomization.yaml.
	files, err := filepath.Glob(filepath.Join(root, "crds", "*kubevirt.io_*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s/crds: %v", root, err)
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, file := range files {
		crd, err := readCRD(file)
		if err != nil {
			return err
		}
		if err := apply(ctx, client, crd); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := waitEstablished(ctx, client, crd.Name); err != nil {
			return err
		}
		if err := waitDiscovered(ctx, client, crd); err != nil {
			return err
		}
	}
	return nil
}

func readCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, yaml.UnmarshalStrict(data, crd)
}

func apply(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	crd.ResourceVersion = existing.ResourceVersion
	_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
	return err
}

func waitEstablished(ctx context.Context, client apiextensionsclient.Interface, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// waitDiscovered waits until discovery lists crd's resource in each version it serves: the
// apiserver publishes it a moment after Established, and kubectl finds resources there.
func waitDiscovered(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			list, err := client.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				return false, nil // not yet: the group version itself is published with the resource
			}
			return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }), nil
		})
		if err != nil {
			return fmt.Errorf("%s in discovery of %s: %w", crd.Spec.Names.Plural, gv, err)
		}
	}
	return nil
}
