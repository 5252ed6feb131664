// Package manager runs virt-controller's controllers over one set of shared informers: the
// VirtualMachine, VirtualMachineInstance and VirtualMachineInstanceReplicaSet controllers
// (the first also reading instance types, preferences and their ControllerRevisions), the
// migration and evacuation controllers, and the node controller over the handlers' heartbeats.
// cmd/virt-controller wraps it in leader election; integration tests run it directly.
package manager

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/client/clientset/versioned/scheme"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
	"github.com/vmctl/vmctl/controller/evacuation"
	"github.com/vmctl/vmctl/controller/metrics"
	"github.com/vmctl/vmctl/controller/migration"
	"github.com/vmctl/vmctl/controller/node"
	"github.com/vmctl/vmctl/controller/replicaset"
	"github.com/vmctl/vmctl/controller/vm"
	"github.com/vmctl/vmctl/controller/vmi"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// Component is the source name on the events the controllers record.
const Component = "virt-controller"

// Options configure the controllers.
type Options struct {
	// LauncherImage is the image of every launcher pod.
	LauncherImage string
	// SidecarShimImage runs hook sidecars' ConfigMap scripts, VirtiofsdImage filesystems'
	// virtiofsd (empty: sidecar-shim, virtiofsd beside LauncherImage, SiblingImage).
	SidecarShimImage string
	VirtiofsdImage   string
	// UseEmulation runs every guest under QEMU's emulator: launcher pods request no /dev/kvm.
	UseEmulation bool
	// ContainerDiskLimit bounds one containerDisk's copy in a launcher pod (zero: the default).
	ContainerDiskLimit resource.Quantity
	// CPUAllocationRatio: vCPUs per requested CPU where an instance requests none.
	CPUAllocationRatio int64
	// VMStateStorageClass: vmi.PodConfig's.
	VMStateStorageClass string
	// Workers is the number of concurrent syncs per controller (default 3).
	Workers int
	// HeartbeatTimeout is how long a node's virt-handler may be silent before the node takes
	// no new instances (zero: node.DefaultHeartbeatTimeout).
	HeartbeatTimeout time.Duration
	// Migrations limits and bounds live migrations (zero values: KubeVirt's defaults).
	Migrations migration.Options
}

// Manager owns the shared informers and the controllers built on them.
type Manager struct {
	kubeFactory kubeinformers.SharedInformerFactory
	// revisionFactory watches only the ControllerRevisions pinning VMs' instance types.
	revisionFactory kubeinformers.SharedInformerFactory
	// nodeFactory watches nodes, for their handlers' heartbeats; namespaces, whose labels
	// select MigrationPolicies; and PVCs, whose access modes say whether a VMI can migrate.
	nodeFactory kubeinformers.SharedInformerFactory
	virtFactory informers.SharedInformerFactory
	broadcaster record.EventBroadcaster
	runners     []runner
	workers     int
	hasSynced   []cache.InformerSynced
	metrics     *metrics.Collector
	leading     atomic.Bool
	synced      atomic.Bool
}

type runner interface {
	Run(ctx context.Context, workers int) error
}

// New builds the controllers. Pods are watched only when they are launcher pods, so the
// controller's memory follows the number of VMs, not the number of pods in the cluster.
func New(kube kubernetes.Interface, virt versioned.Interface, opts Options) (*Manager, error) {
	launchersOnly := kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.Set{v1.AppLabel: v1.LauncherApp}.String()
	})
	instancetypeRevisions := kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = itv1beta1.ControllerRevisionObjectKindLabel
	})
	m := &Manager{
		kubeFactory:     kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, launchersOnly),
		revisionFactory: kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, instancetypeRevisions),
		nodeFactory:     kubeinformers.NewSharedInformerFactory(kube, 0),
		virtFactory:     informers.NewSharedInformerFactory(virt, 0),
		broadcaster:     record.NewBroadcaster(),
		workers:         opts.Workers,
	}
	if m.workers <= 0 {
		m.workers = 3
	}
	m.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	recorder := m.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component})

	pods := m.kubeFactory.Core().V1().Pods()
	vms := m.virtFactory.Kubevirt().V1().VirtualMachines()
	vmis := m.virtFactory.Kubevirt().V1().VirtualMachineInstances()
	rss := m.virtFactory.Kubevirt().V1().VirtualMachineInstanceReplicaSets()
	migrations := m.virtFactory.Kubevirt().V1().VirtualMachineInstanceMigrations()

	it := m.virtFactory.Instancetype().V1beta1()
	types := vm.Instancetypes{
		Instancetypes: it.VirtualMachineInstancetypes(), ClusterInstancetypes: it.VirtualMachineClusterInstancetypes(),
		Preferences: it.VirtualMachinePreferences(), ClusterPreferences: it.VirtualMachineClusterPreferences(),
		Revisions: m.revisionFactory.Apps().V1().ControllerRevisions(),
	}
	vmController, err := vm.New(virt, kube, vms, vmis, pods, types, recorder)
	if err != nil {
		return nil, fmt.Errorf("virtual machine controller: %w", err)
	}
	podConfig := vmi.PodConfig{LauncherImage: opts.LauncherImage, SidecarShimImage: cmp.Or(opts.SidecarShimImage, SiblingImage(opts.LauncherImage, "sidecar-shim")),
		VirtiofsdImage: cmp.Or(opts.VirtiofsdImage, SiblingImage(opts.LauncherImage, "virtiofsd")), UseEmulation: opts.UseEmulation, ContainerDiskLimit: opts.ContainerDiskLimit, CPUAllocationRatio: opts.CPUAllocationRatio,
		VMStateStorageClass: opts.VMStateStorageClass}
	core := m.nodeFactory.Core().V1()
	quotas := vmi.NewQuotas(core.ResourceQuotas(), core.Namespaces())
	vmiController, err := vmi.New(kube, virt, vmis, pods, core.PersistentVolumeClaims(), recorder, podConfig, quotas)
	if err != nil {
		return nil, fmt.Errorf("virtual machine instance controller: %w", err)
	}
	migrationOpts := opts.Migrations
	migrationOpts.Pod = podConfig
	migrationController, err := migration.New(kube, virt, migration.Informers{Migrations: migrations, VMIs: vmis, Pods: pods,
		Policies: m.virtFactory.Migrations().V1alpha1().MigrationPolicies(), Namespaces: core.Namespaces(), Quotas: quotas},
		recorder, migrationOpts)
	if err != nil {
		return nil, fmt.Errorf("migration controller: %w", err)
	}
	evacuationController, err := evacuation.New(virt, vmis, migrations, recorder)
	if err != nil {
		return nil, fmt.Errorf("evacuation controller: %w", err)
	}
	rsController, err := replicaset.New(virt, rss, vmis, recorder)
	if err != nil {
		return nil, fmt.Errorf("replica set controller: %w", err)
	}
	nodes := m.nodeFactory.Core().V1().Nodes()
	nodeController, err := node.New(kube, nodes, recorder, cmp.Or(opts.HeartbeatTimeout, node.DefaultHeartbeatTimeout))
	if err != nil {
		return nil, fmt.Errorf("node controller: %w", err)
	}
	m.runners = []runner{vmController, vmiController, rsController, nodeController, migrationController, evacuationController}
	m.metrics = &metrics.Collector{VMIs: vmis.Lister(), VMs: vms.Lister(), Synced: m.synced.Load, Leading: m.leading.Load, Ready: m.Ready,
		Types: instancetype.ListerGetter{Instancetypes: types.Instancetypes.Lister(), ClusterInstancetypes: types.ClusterInstancetypes.Lister(),
			Preferences: types.Preferences.Lister(), ClusterPreferences: types.ClusterPreferences.Lister()}}
	m.hasSynced = []cache.InformerSynced{pods.Informer().HasSynced, vms.Informer().HasSynced,
		vmis.Informer().HasSynced, rss.Informer().HasSynced, migrations.Informer().HasSynced, nodes.Informer().HasSynced, types.Revisions.Informer().HasSynced,
		types.Instancetypes.Informer().HasSynced, types.ClusterInstancetypes.Informer().HasSynced,
		types.Preferences.Informer().HasSynced, types.ClusterPreferences.Informer().HasSynced}
	return m, nil
}

// Run starts the informers and every controller, and blocks until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	defer m.broadcaster.Shutdown()
	m.kubeFactory.Start(ctx.Done())
	m.revisionFactory.Start(ctx.Done())
	m.nodeFactory.Start(ctx.Done())
	m.virtFactory.Start(ctx.Done())
	defer m.kubeFactory.Shutdown()
	defer m.revisionFactory.Shutdown()
	defer m.nodeFactory.Shutdown()
	defer m.virtFactory.Shutdown()

	g, ctx := errgroup.WithContext(ctx)
	for _, r := range m.runners {
		g.Go(func() error { return r.Run(ctx, m.workers) })
	}
	g.Go(func() error {
		if cache.WaitForCacheSync(ctx.Done(), m.hasSynced...) {
			m.synced.Store(true)
		}
		return nil
	})
	return g.Wait()
}

// Ready is the readiness check: a standby replica is ready to take over; the leader is ready
// once its caches have synced, so it acts on a full picture.
func (m *Manager) Ready() error {
	if m.leading.Load() && !m.synced.Load() {
		return fmt.Errorf("caches not synced yet")
	}
	return nil
}

// Metrics is the collector of virt-controller's kubevirt_* metrics over the manager's caches
// (controller/metrics), for /metrics.
func (m *Manager) Metrics() prometheus.Collector { return m.metrics }

// Run builds the controllers and runs them until ctx ends.
func Run(ctx context.Context, kube kubernetes.Interface, virt versioned.Interface, opts Options) error {
	m, err := New(kube, virt, opts)
	if err != nil {
		return err
	}
	return m.Run(ctx)
}
