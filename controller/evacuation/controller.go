// Package evacuation is virt-controller's evacuation controller: an instance a drain asked to
// leave its node (status.evacuationNodeName, set by virt-api when it refused the eviction of
// the instance's launcher pod) gets a VirtualMachineInstanceMigration, one at a time, retried
// after a pause when one fails, until the instance runs elsewhere. The migration controller's
// limits decide how many run at once. Instances with evictionStrategy External are their
// owner's to move.
package evacuation

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/expectations"
	"github.com/vmctl/vmctl/controller/migration"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the component name on events the controller records.
const ControllerName = "evacuation-controller"

// GenerateName prefixes the migrations it creates, as KubeVirt names them.
const GenerateName = "kubevirt-evacuation-"

// retryAfter is the pause after a failed migration before the next attempt.
const retryAfter = 20 * time.Second

// Controller creates the migrations that evacuate instances.
type Controller struct {
	virt         versioned.Interface
	vmiLister    listers.VirtualMachineInstanceLister
	byVMI        cache.Indexer
	synced       []cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	expectations *expectations.Expectations
}

// New wires the controller: instances enqueue themselves, migrations their instance.
func New(virt versioned.Interface, vmis informers.VirtualMachineInstanceInformer, migrations informers.VirtualMachineInstanceMigrationInformer,
	recorder record.EventRecorder) (*Controller, error) {
	byVMI, err := migration.IndexByVMI(migrations.Informer())
	if err != nil {
		return nil, err
	}
	c := &Controller{
		virt: virt, vmiLister: vmis.Lister(), byVMI: byVMI,
		synced:       []cache.InformerSynced{vmis.Informer().HasSynced, migrations.Informer().HasSynced},
		queue:        workloop.NewQueue("evacuation"),
		recorder:     recorder,
		expectations: expectations.New(),
	}
	if _, err := vmis.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	forVMI := func(obj any, created bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(*v1.VirtualMachineInstanceMigration); ok {
			key := m.Namespace + "/" + m.Spec.VMIName
			if created {
				c.expectations.CreationObserved(key)
			}
			c.queue.Add(key)
		}
	}
	if _, err := migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { forVMI(obj, true) },
		UpdateFunc: func(_, obj any) { forVMI(obj, false) },
		DeleteFunc: func(obj any) { forVMI(obj, false) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes instances with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	loop := workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	return loop.Run(ctx, workers)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	s := vmi.Status
	// An External instance is marked for its owner, who moves it: it never migrates here.
	external := vmi.Spec.EvictionStrategyOr("") == v1.EvictionStrategyExternal
	if external || s.EvacuationNodeName == "" || s.EvacuationNodeName != s.NodeName || s.Phase != v1.Running || vmi.DeletionTimestamp != nil ||
		!c.expectations.Satisfied(key) {
		return nil
	}
	if m := s.MigrationState; m != nil && m.Completed && !m.Failed && m.TargetNode != s.NodeName {
		return nil // it has moved; the instance controller is recording where
	}
	ms := migration.Of(c.byVMI, key)
	if slices.ContainsFunc(ms, func(m *v1.VirtualMachineInstanceMigration) bool { return !m.Status.Phase.IsFinal() }) {
		return nil // under way; its end queues the instance again
	}
	if wait := time.Until(lastFailure(ms).Add(retryAfter)); wait > 0 {
		c.queue.AddAfter(key, wait)
		return nil
	}
	c.expectations.ExpectCreations(key, 1)
	m, err := c.virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Create(ctx, &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: GenerateName, Labels: map[string]string{v1.MigrationSelectorLabel: name}},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: name},
	}, metav1.CreateOptions{})
	if err != nil {
		c.expectations.CreationObserved(key)
		return err
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, "EvacuationStarted", "Migrating off node %s (migration %s): its launcher pod was evicted", s.NodeName, m.Name)
	return nil
}

// lastFailure is when the latest failed migration failed (zero: none did).
func lastFailure(ms []*v1.VirtualMachineInstanceMigration) time.Time {
	var last time.Time
	for _, m := range ms {
		if m.Status.Phase != v1.MigrationFailed {
			continue
		}
		for _, t := range m.Status.PhaseTransitionTimestamps {
			if t.Phase == v1.MigrationFailed && t.PhaseTransitionTimestamp.After(last) {
				last = t.PhaseTransitionTimestamp.Time
			}
		}
	}
	return last
}
