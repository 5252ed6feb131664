// Package migration is virt-controller's migration controller: for each
// VirtualMachineInstanceMigration it starts a target launcher pod on another node, hands the
// instance over to the virt-handlers (status.migrationState names the target), follows what
// they report, and ends the migration Succeeded or Failed with the reason, cleaning up the
// target pod of a migration that failed or was cancelled. It never runs more migrations at once
// than Limits allow, and one instance migrates once at a time.
package migration

import (
	"cmp"
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	policyinformers "github.com/vmctl/vmctl/client/informers/externalversions/migrations/v1alpha1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	policylisters "github.com/vmctl/vmctl/client/listers/migrations/v1alpha1"
	"github.com/vmctl/vmctl/controller/expectations"
	"github.com/vmctl/vmctl/controller/vmi"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/superseded"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the component name on events the controller records.
const ControllerName = "migration-controller"

// Options configure the controller; zero values take KubeVirt's defaults.
type Options struct {
	// ParallelMigrationsPerCluster bounds the migrations past Pending in the cluster (5).
	ParallelMigrationsPerCluster int
	// ParallelOutboundMigrationsPerNode bounds those leaving one node (2).
	ParallelOutboundMigrationsPerNode int
	// TargetTimeout bounds the time from the target pod's creation until the target is ready
	// to receive the domain (5 minutes): an unschedulable target fails the migration.
	TargetTimeout time.Duration
	// Pod renders the target launcher pod as the instance controller renders the first.
	Pod vmi.PodConfig
	// Defaults is how migrations run where no MigrationPolicy says otherwise
	// (DefaultConfiguration when empty).
	Defaults v1.MigrationConfiguration
}

func (o Options) withDefaults() Options {
	if o.ParallelMigrationsPerCluster <= 0 {
		o.ParallelMigrationsPerCluster = 5
	}
	if o.ParallelOutboundMigrationsPerNode <= 0 {
		o.ParallelOutboundMigrationsPerNode = 2
	}
	if o.TargetTimeout <= 0 {
		o.TargetTimeout = 5 * time.Minute
	}
	d := DefaultConfiguration()
	o.Defaults.BandwidthPerMigration = cmp.Or(o.Defaults.BandwidthPerMigration, d.BandwidthPerMigration)
	o.Defaults.CompletionTimeoutPerGiB = cmp.Or(o.Defaults.CompletionTimeoutPerGiB, d.CompletionTimeoutPerGiB)
	o.Defaults.AllowAutoConverge = cmp.Or(o.Defaults.AllowAutoConverge, d.AllowAutoConverge)
	return o
}

// Controller reconciles migrations with their target pods and instances.
type Controller struct {
	kube       kubernetes.Interface
	virt       versioned.Interface
	migrations listers.VirtualMachineInstanceMigrationLister
	byVMI      cache.Indexer
	vmiLister  listers.VirtualMachineInstanceLister
	policies   policylisters.MigrationPolicyLister
	namespaces corelisters.NamespaceLister
	quotas     vmi.Quotas
	launchers  launcherpods.Pods
	synced     []cache.InformerSynced

	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	expectations *expectations.Expectations
	// inFlight are the migrations this controller started, until the cache shows them final:
	// the limits count them even before the cache has seen them leave Pending.
	inFlight *inFlight
	// written are the cached instances whose status (migrationState) this controller has
	// since replaced: a sync from such a copy would take the hand-over for lost.
	written *superseded.Versions
	opts    Options
	clock   clock.PassiveClock
}

// Informers are what the controller watches.
type Informers struct {
	Migrations informers.VirtualMachineInstanceMigrationInformer
	VMIs       informers.VirtualMachineInstanceInformer
	Pods       coreinformers.PodInformer
	// Policies and Namespaces (read when a migration is handed over) pick its MigrationPolicy.
	Policies   policyinformers.MigrationPolicyInformer
	Namespaces coreinformers.NamespaceInformer
	// Quotas size the target pod's limits as the instance controller sizes the source's.
	Quotas vmi.Quotas
}

// New wires the controller to its informers: instances and target pods map to migrations.
func New(kube kubernetes.Interface, virt versioned.Interface, inf Informers, recorder record.EventRecorder, opts Options) (*Controller, error) {
	migrations, vmis, pods := inf.Migrations, inf.VMIs, inf.Pods
	launchers, err := launcherpods.Index(pods.Informer())
	if err != nil {
		return nil, err
	}
	byVMI, err := IndexByVMI(migrations.Informer())
	if err != nil {
		return nil, err
	}
	c := &Controller{
		kube:       kube,
		virt:       virt,
		migrations: migrations.Lister(),
		byVMI:      byVMI,
		vmiLister:  vmis.Lister(),
		policies:   inf.Policies.Lister(),
		namespaces: inf.Namespaces.Lister(),
		launchers:  launchers,
		synced: append([]cache.InformerSynced{migrations.Informer().HasSynced, vmis.Informer().HasSynced, pods.Informer().HasSynced,
			inf.Policies.Informer().HasSynced, inf.Namespaces.Informer().HasSynced}, inf.Quotas.Synced...),
		quotas:       inf.Quotas,
		queue:        workloop.NewQueue("virtualmachineinstancemigration"),
		recorder:     recorder,
		expectations: expectations.New(),
		inFlight:     newInFlight(),
		written:      superseded.New(),
		opts:         opts.withDefaults(),
		clock:        clock.RealClock{},
	}
	if _, err := migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, obj any) {
			c.enqueue(obj)
			if !old.(*v1.VirtualMachineInstanceMigration).Status.Phase.IsFinal() && obj.(*v1.VirtualMachineInstanceMigration).Status.Phase.IsFinal() {
				c.enqueuePending() // a slot came free
			}
		},
		DeleteFunc: func(obj any) { c.enqueue(obj); c.enqueuePending() },
	}); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueForVMI,
		UpdateFunc: func(_, obj any) { c.enqueueForVMI(obj) },
		DeleteFunc: c.enqueueForVMI,
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, ok := targetPodKey(obj); ok {
				c.expectations.CreationObserved(key)
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(_, obj any) { c.enqueueForPod(obj) },
		DeleteFunc: c.enqueueForPod,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes migrations until ctx ends, with one worker whatever is asked: the limits are
// counted over all migrations, and two workers could each start the last free one.
func (c *Controller) Run(ctx context.Context, _ int) error {
	loop := workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	return loop.Run(ctx, 1)
}

func (c *Controller) enqueue(obj any) { workloop.Enqueue(c.queue, obj) }

// enqueuePending queues the migrations waiting for a free slot.
func (c *Controller) enqueuePending() {
	all, err := c.migrations.List(everything)
	if err != nil {
		return
	}
	for _, m := range all {
		if m.Status.Phase == v1.MigrationPhaseUnset || m.Status.Phase == v1.MigrationPending {
			c.enqueue(m)
		}
	}
}

// enqueueForVMI queues the migrations of an instance.
func (c *Controller) enqueueForVMI(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return
	}
	for _, m := range Of(c.byVMI, vmi.Namespace+"/"+vmi.Name) {
		c.enqueue(m)
	}
}

// enqueueForPod queues the migration a target pod belongs to.
func (c *Controller) enqueueForPod(obj any) {
	if key, ok := targetPodKey(obj); ok {
		c.queue.Add(key)
	}
}

// targetPodKey is the key of the migration whose target a pod is (its annotation).
func targetPodKey(obj any) (string, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[v1.MigrationJobLabel] == "" || pod.Annotations[v1.MigrationJobNameAnnotation] == "" {
		return "", false
	}
	return pod.Namespace + "/" + pod.Annotations[v1.MigrationJobNameAnnotation], true
}

const vmiIndex = "migration.vmi"

// IndexByVMI indexes a migration informer that has not started by the instance each migration
// moves (key namespace/name), for Of; controllers sharing the informer may each call it.
func IndexByVMI(informer cache.SharedIndexInformer) (cache.Indexer, error) {
	if _, ok := informer.GetIndexer().GetIndexers()[vmiIndex]; !ok {
		err := informer.AddIndexers(cache.Indexers{vmiIndex: func(obj any) ([]string, error) {
			m, ok := obj.(*v1.VirtualMachineInstanceMigration)
			if !ok {
				return nil, nil
			}
			return []string{m.Namespace + "/" + m.Spec.VMIName}, nil
		}})
		if err != nil {
			return nil, err
		}
	}
	return informer.GetIndexer(), nil
}

// Of are the migrations of the instance of key (namespace/name) in an IndexByVMI indexer.
func Of(byVMI cache.Indexer, key string) []*v1.VirtualMachineInstanceMigration {
	objs, _ := byVMI.ByIndex(vmiIndex, key)
	out := make([]*v1.VirtualMachineInstanceMigration, 0, len(objs))
	for _, obj := range objs {
		out = append(out, obj.(*v1.VirtualMachineInstanceMigration))
	}
	return out
}
