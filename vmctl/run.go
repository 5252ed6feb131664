package vmctl

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/health"
	"github.com/vmctl/vmctl/vmctl/forward"
)

// teardownMargin is kept from the pod's grace period for vmctl's own exit after the clone's.
const teardownMargin = 2 * time.Second

// Run is vmctl: it finds its pod, keeps the pod's clone of the prototype alive until ctx ends
// (SIGTERM), then deletes the clone and waits for it to go within the pod's grace period.
func Run(ctx context.Context, opts Options) error {
	id, err := lookupPod(&opts, os.Getenv)
	if err != nil {
		return err
	}
	opts.defaultNamespaces(id.Namespace)
	if id.Namespace == "" {
		id.Namespace = opts.Namespace
	}
	// An empty --kubeconfig is the in-cluster configuration (with a warning outside a pod).
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("cluster configuration: %w", err)
	}
	cfg.UserAgent = "vmctl"
	kube, err := component.KubeClient(cfg)
	if err != nil {
		return err
	}
	virt, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pod, err := getPod(ctx, kube, id)
	if err != nil {
		return err
	}
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	ctx = klog.NewContext(ctx, log)
	log.Info("starting", "prototype", klog.KRef(opts.ProtoNamespace, opts.Prototype), "clone", klog.KRef(opts.Namespace, CloneName(opts.Prototype, pod.Name)))
	if opts.Namespace != pod.Namespace {
		log.Info("the clone lives outside the pod's namespace: it cannot be owned by the pod, so only vmctl's SIGTERM handling removes it", "namespace", opts.Namespace)
	}

	// Not stopped by SIGTERM (ctx) but shut down last: the teardown's events still go out.
	broadcaster := record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events(pod.Namespace)})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "vmctl", Host: pod.Spec.NodeName})

	c, err := NewController(virt, pod, opts, recorder)
	if err != nil {
		return err
	}
	// Health outlives the controller: the kubelet may probe during teardown, and must see
	// vmctl alive (and unready) until it exits.
	healthCtx, stopHealth := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHealth()
	if opts.HealthAddr != "" {
		go func() {
			if err := health.Serve(healthCtx, opts.HealthAddr, c.ready, health.Always); err != nil {
				log.Error(err, "health endpoints failed")
			}
		}()
	}
	// Forwarding outlives the controller too: connections open at SIGTERM may finish while
	// the clone shuts down.
	if len(opts.Forward) > 0 {
		c.WatchInstance()
		fwd, err := forward.Listen(opts.Forward, c.GuestAddress)
		if err != nil {
			return err
		}
		go fwd.Serve(healthCtx)
	}
	if err := c.Run(ctx); err != nil {
		return err
	}
	grace := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return teardown(context.WithoutCancel(ctx), virt, recorder, pod, opts.Namespace, c.CloneName(), max(grace-teardownMargin, time.Second))
}

// getPod reads vmctl's own pod: its UID owns the clone, its node pins it, its grace period
// bounds the teardown. Transient errors are retried; a pod that does not exist is an error.
func getPod(ctx context.Context, kube kubernetes.Interface, id PodIdentity) (*corev1.Pod, error) {
	var pod *corev1.Pod
	backoff := wait.Backoff{Steps: 6, Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1}
	err := retry.OnError(backoff, func(err error) bool {
		return !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) && ctx.Err() == nil
	}, func() error {
		var err error
		pod, err = kube.CoreV1().Pods(id.Namespace).Get(ctx, id.Name, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading vmctl's pod %s/%s: %w", id.Namespace, id.Name, err)
	}
	return pod, nil
}
