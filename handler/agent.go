package handler

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/client/clientset/versioned/scheme"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// NewInformerFactories are the informers of one node: instances scheduled to it (selected by
// their status.nodeName field) and launcher pods bound to it. The handler's memory follows its node's guests.
func NewInformerFactories(kube kubernetes.Interface, virt versioned.Interface, nodeName string) (kubeinformers.SharedInformerFactory, informers.SharedInformerFactory) {
	pods := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.Set{v1.AppLabel: v1.LauncherApp}.String()
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	}))
	vmis := informers.NewSharedInformerFactoryWithOptions(virt, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector(v1.NodeNameField, nodeName).String()
	}))
	return pods, vmis
}

// newIncomingFactory watches the instances migrating to the node (their status.nodeName is
// still the source's).
func newIncomingFactory(virt versioned.Interface, nodeName string) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(virt, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector(v1.MigrationTargetNodeField, nodeName).String()
	}))
}

// Agent is the whole node agent: the controller over its node's informers, and the event
// recorder. cmd/virt-handler runs it.
type Agent struct {
	kubeFactory     kubeinformers.SharedInformerFactory
	virtFactory     informers.SharedInformerFactory
	incomingFactory informers.SharedInformerFactory
	broadcaster     record.EventBroadcaster
	controller      *Controller
	workers         int
}

// NewAgent builds the node agent; workers is the number of concurrent syncs (at least 1).
func NewAgent(kube kubernetes.Interface, virt versioned.Interface, opts Options, workers int) (*Agent, error) {
	a := &Agent{broadcaster: record.NewBroadcaster(), workers: max(workers, 1)}
	a.kubeFactory, a.virtFactory = NewInformerFactories(kube, virt, opts.NodeName)
	a.incomingFactory = newIncomingFactory(virt, opts.NodeName)
	a.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	recorder := a.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ControllerName, Host: opts.NodeName})
	c, err := New(virt, a.virtFactory.Kubevirt().V1().VirtualMachineInstances(),
		a.incomingFactory.Kubevirt().V1().VirtualMachineInstances(), a.kubeFactory.Core().V1().Pods(), recorder, opts)
	if err != nil {
		return nil, err
	}
	a.controller = c
	return a, nil
}

// Run starts the informers and the controller and blocks until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	defer a.broadcaster.Shutdown()
	a.kubeFactory.Start(ctx.Done())
	a.virtFactory.Start(ctx.Done())
	a.incomingFactory.Start(ctx.Done())
	defer a.kubeFactory.Shutdown()
	defer a.virtFactory.Shutdown()
	defer a.incomingFactory.Shutdown()
	return a.controller.Run(ctx, a.workers)
}

// Live is the liveness check: no worker is wedged.
func (a *Agent) Live() error { return a.controller.Live() }

// Ready is the readiness check: the caches have synced.
func (a *Agent) Ready() error { return a.controller.Ready() }

// Metrics is the collector of the node's per-instance metrics, for /metrics.
func (a *Agent) Metrics() prometheus.Collector { return a.controller.Metrics() }

// Streams is the server of virt-api's streams to this node's guests, with certs read at each
// handshake.
func (a *Agent) Streams(certs func(context.Context) (handlerapi.Material, error)) *StreamServer {
	return &StreamServer{Controller: a.controller, Certs: certs}
}
