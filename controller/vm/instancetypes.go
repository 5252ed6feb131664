package vm

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/tools/cache"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	itinformers "github.com/vmctl/vmctl/client/informers/externalversions/instancetype/v1beta1"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// Instancetypes are the informers the controller expands instance types and preferences
// from. Revisions need only the ControllerRevisions this controller makes (labelled with
// itv1beta1.ControllerRevisionObjectKindLabel).
type Instancetypes struct {
	Instancetypes        itinformers.VirtualMachineInstancetypeInformer
	ClusterInstancetypes itinformers.VirtualMachineClusterInstancetypeInformer
	Preferences          itinformers.VirtualMachinePreferenceInformer
	ClusterPreferences   itinformers.VirtualMachineClusterPreferenceInformer
	Revisions            appsinformers.ControllerRevisionInformer
}

// errTypeUnavailable: the instance type or preference cannot be read or pinned. Retrying does
// not help; its informer re-enqueues the VM when it appears or changes.
var errTypeUnavailable = errors.New("instance type or preference unavailable")

// refIndex indexes VMs by the instance types and preferences they wait for (not yet pinned),
// so a change to one enqueues only those VMs.
const refIndex = "instancetypeRef"

func refKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// unpinnedRefs are the index keys of a VM's matchers that have no revision yet.
func unpinnedRefs(obj any) ([]string, error) {
	vm, ok := obj.(*v1.VirtualMachine)
	if !ok {
		return nil, nil
	}
	var keys []string
	wait := func(ref *v1.InstancetypeStatusRef, revisionName, name, kind, namespacedKind string) {
		if pinned(ref, revisionName, name, kind) {
			return
		}
		ns := ""
		if kind == namespacedKind {
			ns = vm.Namespace
		}
		keys = append(keys, refKey(kind, ns, name))
	}
	if m := vm.Spec.Instancetype; m != nil {
		wait(vm.Status.InstancetypeRef, m.RevisionName, m.Name, v1.InstancetypeKindOf(m.Kind), v1.InstancetypeKind)
	}
	if m := vm.Spec.Preference; m != nil {
		wait(vm.Status.PreferenceRef, m.RevisionName, m.Name, v1.PreferenceKindOf(m.Kind), v1.PreferenceKind)
	}
	return keys, nil
}

// pinned: the matcher names a revision, or the status holds one for the same object.
func pinned(ref *v1.InstancetypeStatusRef, revisionName, name, kind string) bool {
	return revisionName != "" || (ref != nil && ref.Name == name && ref.Kind == kind &&
		ref.ControllerRevisionRef != nil && ref.ControllerRevisionRef.Name != "")
}

// watchInstancetypes wires the informers: VMs are indexed by what they wait for, and an
// instance type or preference that appears or changes enqueues exactly those VMs. A pinned
// VM never needs it: its copy is in its revision.
func (c *Controller) watchInstancetypes(vms cache.SharedIndexInformer, it Instancetypes) error {
	if err := vms.AddIndexers(cache.Indexers{refIndex: unpinnedRefs}); err != nil {
		return err
	}
	c.vmIndexer = vms.GetIndexer()
	for kind, inf := range map[string]cache.SharedIndexInformer{
		v1.InstancetypeKind: it.Instancetypes.Informer(), v1.ClusterInstancetypeKind: it.ClusterInstancetypes.Informer(),
		v1.PreferenceKind: it.Preferences.Informer(), v1.ClusterPreferenceKind: it.ClusterPreferences.Informer(),
	} {
		enqueue := func(obj any) { c.enqueueWaiting(kind, obj) }
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
		}); err != nil {
			return err
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	c.synced = append(c.synced, it.Revisions.Informer().HasSynced)
	c.getter = instancetype.ListerGetter{
		Instancetypes: it.Instancetypes.Lister(), ClusterInstancetypes: it.ClusterInstancetypes.Lister(),
		Preferences: it.Preferences.Lister(), ClusterPreferences: it.ClusterPreferences.Lister(),
		Revisions: it.Revisions.Lister(),
	}
	c.revisionLister = it.Revisions.Lister()
	return nil
}

func (c *Controller) enqueueWaiting(kind string, obj any) {
	meta, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	waiting, err := c.vmIndexer.ByIndex(refIndex, refKey(kind, meta.GetNamespace(), meta.GetName()))
	if err != nil {
		return
	}
	for _, o := range waiting {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			c.queue.Add(key)
		}
	}
}

// pin brings status.instancetypeRef and status.preferenceRef in line with the matchers, as
// KubeVirt does: a changed name or kind drops the old copy, a revisionName in the spec is
// used as given, and an instance type or preference without a copy yet is copied into a
// new ControllerRevision now. The status is written by the sync.
func (c *Controller) pin(ctx context.Context, vm *v1.VirtualMachine) error {
	var errs []error
	if m := vm.Spec.Instancetype; m != nil {
		kind := v1.InstancetypeKindOf(m.Kind)
		vm.Status.InstancetypeRef = syncRef(vm.Status.InstancetypeRef, m.Name, kind, m.RevisionName)
		if vm.Status.InstancetypeRef.ControllerRevisionRef == nil {
			found, err := instancetype.FindInstancetype(c.getter, vm.Namespace, m)
			errs = append(errs, c.capture(ctx, vm, vm.Status.InstancetypeRef, found, err))
		}
	} else {
		vm.Status.InstancetypeRef = nil
	}
	if m := vm.Spec.Preference; m != nil {
		kind := v1.PreferenceKindOf(m.Kind)
		vm.Status.PreferenceRef = syncRef(vm.Status.PreferenceRef, m.Name, kind, m.RevisionName)
		if vm.Status.PreferenceRef.ControllerRevisionRef == nil {
			found, err := instancetype.FindPreference(c.getter, vm.Namespace, m)
			errs = append(errs, c.capture(ctx, vm, vm.Status.PreferenceRef, found, err))
		}
	} else {
		vm.Status.PreferenceRef = nil
	}
	return errors.Join(errs...)
}

func syncRef(old *v1.InstancetypeStatusRef, name, kind, revisionName string) *v1.InstancetypeStatusRef {
	ref := &v1.InstancetypeStatusRef{Name: name, Kind: kind}
	if old != nil && old.Name == name && old.Kind == kind {
		ref = old.DeepCopy()
	}
	if revisionName != "" {
		ref.ControllerRevisionRef = &v1.ControllerRevisionRef{Name: revisionName}
	}
	return ref
}

// capture stores the found object in a revision and records it in ref. The revision's name
// is fixed by the object's generation, so a revision left by an earlier attempt is reused
// when it holds the same copy.
func (c *Controller) capture(ctx context.Context, vm *v1.VirtualMachine, ref *v1.InstancetypeStatusRef, found *instancetype.Object, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %s %q: %v", errTypeUnavailable, ref.Kind, ref.Name, err)
	}
	rev, err := instancetype.NewRevision(vm, vmKind, found)
	if err != nil {
		return err
	}
	revisions := c.kube.AppsV1().ControllerRevisions(vm.Namespace)
	if _, err = revisions.Create(ctx, rev, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		var existing *appsv1.ControllerRevision
		if existing, err = revisions.Get(ctx, rev.Name, metav1.GetOptions{}); err == nil && !instancetype.SameCopy(rev, existing) {
			err = fmt.Errorf("%w: ControllerRevision %s exists with other data", errTypeUnavailable, rev.Name)
		}
	}
	if err != nil {
		return err
	}
	ref.ControllerRevisionRef = &v1.ControllerRevisionRef{Name: rev.Name}
	return nil
}

// pinnedSpecs reads the copies the VM's status pins, from the cache or, for a revision made
// a moment ago that the cache has not seen, from the API server.
func (c *Controller) pinnedSpecs(ctx context.Context, vm *v1.VirtualMachine) (*itv1beta1.VirtualMachineInstancetypeSpec, *itv1beta1.VirtualMachinePreferenceSpec, error) {
	read := func(ref *v1.InstancetypeStatusRef) (*instancetype.Object, error) {
		if ref == nil || ref.ControllerRevisionRef == nil {
			return nil, fmt.Errorf("%w: %s %q has no revision yet", errTypeUnavailable, refKind(ref), refName(ref))
		}
		name := ref.ControllerRevisionRef.Name
		rev, err := c.revisionLister.ControllerRevisions(vm.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			rev, err = c.kube.AppsV1().ControllerRevisions(vm.Namespace).Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("%w: ControllerRevision %s: %v", errTypeUnavailable, name, err)
		}
		return instancetype.Decode(rev)
	}
	var it *itv1beta1.VirtualMachineInstancetypeSpec
	var pref *itv1beta1.VirtualMachinePreferenceSpec
	if vm.Spec.Instancetype != nil {
		o, err := read(vm.Status.InstancetypeRef)
		if err != nil {
			return nil, nil, err
		}
		if it = o.Instancetype; it == nil {
			return nil, nil, fmt.Errorf("%w: revision of %s holds a %s", errTypeUnavailable, refName(vm.Status.InstancetypeRef), o.Kind)
		}
	}
	if vm.Spec.Preference != nil {
		o, err := read(vm.Status.PreferenceRef)
		if err != nil {
			return nil, nil, err
		}
		if pref = o.Preference; pref == nil {
			return nil, nil, fmt.Errorf("%w: revision of %s holds a %s", errTypeUnavailable, refName(vm.Status.PreferenceRef), o.Kind)
		}
	}
	return it, pref, nil
}

func refKind(r *v1.InstancetypeStatusRef) string {
	if r == nil {
		return "instance type"
	}
	return r.Kind
}

func refName(r *v1.InstancetypeStatusRef) string {
	if r == nil {
		return ""
	}
	return r.Name
}
