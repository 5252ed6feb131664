package instancetype

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	listers "github.com/vmctl/vmctl/client/listers/instancetype/v1beta1"
)

// Getter reads instance types and preferences: from informer caches in virt-controller, from
// the API server in virt-api (which keeps no caches).
type Getter interface {
	Instancetype(namespace, name string) (*itv1beta1.VirtualMachineInstancetype, error)
	ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error)
	Preference(namespace, name string) (*itv1beta1.VirtualMachinePreference, error)
	ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error)
	Revision(namespace, name string) (*appsv1.ControllerRevision, error)
}

// Object is a found instance type or preference: the object itself, for a ControllerRevision,
// its metadata, and whichever spec it has.
type Object struct {
	Kind         string
	Object       metav1.Object
	Instancetype *itv1beta1.VirtualMachineInstancetypeSpec
	Preference   *itv1beta1.VirtualMachinePreferenceSpec
}

// FindInstancetype reads the instance type a matcher names in the VM's namespace.
func FindInstancetype(g Getter, namespace string, m *v1.InstancetypeMatcher) (*Object, error) {
	if m.Name == "" {
		return nil, errInferUnsupported(field.NewPath("spec", "instancetype"))
	}
	switch kind := v1.InstancetypeKindOf(m.Kind); kind {
	case v1.InstancetypeKind:
		obj, err := g.Instancetype(namespace, m.Name)
		if err != nil {
			return nil, err
		}
		return &Object{Kind: kind, Object: obj, Instancetype: &obj.Spec}, nil
	case v1.ClusterInstancetypeKind:
		obj, err := g.ClusterInstancetype(m.Name)
		if err != nil {
			return nil, err
		}
		return &Object{Kind: kind, Object: obj, Instancetype: &obj.Spec}, nil
	}
	return nil, fmt.Errorf("got unexpected kind in InstancetypeMatcher: %s", m.Kind)
}

// FindPreference reads the preference a matcher names in the VM's namespace.
func FindPreference(g Getter, namespace string, m *v1.PreferenceMatcher) (*Object, error) {
	if m.Name == "" {
		return nil, errInferUnsupported(field.NewPath("spec", "preference"))
	}
	switch kind := v1.PreferenceKindOf(m.Kind); kind {
	case v1.PreferenceKind:
		obj, err := g.Preference(namespace, m.Name)
		if err != nil {
			return nil, err
		}
		return &Object{Kind: kind, Object: obj, Preference: &obj.Spec}, nil
	case v1.ClusterPreferenceKind:
		obj, err := g.ClusterPreference(m.Name)
		if err != nil {
			return nil, err
		}
		return &Object{Kind: kind, Object: obj, Preference: &obj.Spec}, nil
	}
	return nil, fmt.Errorf("got unexpected kind in PreferenceMatcher: %s", m.Kind)
}

// errInferUnsupported: KubeVirt infers from the labels of a volume's DataVolume, DataSource
// or PVC; this platform does not look them up.
func errInferUnsupported(p *field.Path) error {
	return fmt.Errorf("%s: name is required: inferFromVolume is not supported here", p)
}

// ListerGetter reads from informer caches.
type ListerGetter struct {
	Instancetypes        listers.VirtualMachineInstancetypeLister
	ClusterInstancetypes listers.VirtualMachineClusterInstancetypeLister
	Preferences          listers.VirtualMachinePreferenceLister
	ClusterPreferences   listers.VirtualMachineClusterPreferenceLister
	Revisions            appslisters.ControllerRevisionLister
}

func (l ListerGetter) Revision(ns, name string) (*appsv1.ControllerRevision, error) {
	return l.Revisions.ControllerRevisions(ns).Get(name)
}

func (l ListerGetter) Instancetype(ns, name string) (*itv1beta1.VirtualMachineInstancetype, error) {
	return l.Instancetypes.VirtualMachineInstancetypes(ns).Get(name)
}

func (l ListerGetter) ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error) {
	return l.ClusterInstancetypes.Get(name)
}

func (l ListerGetter) Preference(ns, name string) (*itv1beta1.VirtualMachinePreference, error) {
	return l.Preferences.VirtualMachinePreferences(ns).Get(name)
}

func (l ListerGetter) ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error) {
	return l.ClusterPreferences.Get(name)
}

// ClientGetter reads from the API server, each call bounded by Timeout (the admission
// webhook must answer within its own).
type ClientGetter struct {
	Virt    versioned.Interface
	Kube    kubernetes.Interface
	Timeout time.Duration
}

func (c ClientGetter) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.Timeout)
}

func (c ClientGetter) Instancetype(ns, name string) (*itv1beta1.VirtualMachineInstancetype, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Virt.InstancetypeV1beta1().VirtualMachineInstancetypes(ns).Get(ctx, name, metav1.GetOptions{})
}

func (c ClientGetter) ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Virt.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Get(ctx, name, metav1.GetOptions{})
}

func (c ClientGetter) Preference(ns, name string) (*itv1beta1.VirtualMachinePreference, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Virt.InstancetypeV1beta1().VirtualMachinePreferences(ns).Get(ctx, name, metav1.GetOptions{})
}

func (c ClientGetter) ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Virt.InstancetypeV1beta1().VirtualMachineClusterPreferences().Get(ctx, name, metav1.GetOptions{})
}

func (c ClientGetter) Revision(ns, name string) (*appsv1.ControllerRevision, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Kube.AppsV1().ControllerRevisions(ns).Get(ctx, name, metav1.GetOptions{})
}
