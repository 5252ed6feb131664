package manager

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// LeaseName is the Lease virt-controller replicas compete for.
const LeaseName = "virt-controller"

// Election says where the Lease lives and who competes for it.
type Election struct {
	Namespace string
	Identity  string
}

// RunElected runs the controllers only while this process holds the Lease, so two replicas never
// reconcile at once. It returns when ctx ends or leadership is lost: a replica that lost the
// Lease exits and restarts rather than carry on with caches and expectations of its reign.
func (m *Manager) RunElected(ctx context.Context, kube kubernetes.Interface, e Election) error {
	return runElected(ctx, kube, e, func(ctx context.Context) error {
		m.leading.Store(true)
		return m.Run(ctx)
	})
}

// runElected runs run while this process holds the Lease. When ctx ends, the Lease is released
// only once run has returned: client-go's elector releases it as soon as its own context ends,
// without waiting for the leader's work, so a successor (a rollout's new replica) would start
// while this one's last syncs still write.
func runElected(ctx context.Context, kube kubernetes.Interface, e Election, run func(context.Context) error) error {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.Namespace, LeaseName,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: e.Identity})
	if err != nil {
		return err
	}
	electorCtx, stopElector := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElector()
	var (
		mu      sync.Mutex
		running chan struct{} // closed when run has returned; nil until this process leads
	)
	context.AfterFunc(ctx, func() {
		mu.Lock()
		r := running
		mu.Unlock()
		if r != nil {
			<-r
		}
		stopElector()
	})
	lost := make(chan struct{})
	leaderelection.RunOrDie(electorCtx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					return
				}
				running = make(chan struct{})
				defer close(running)
				mu.Unlock()
				// Stop when the Lease is lost or when ctx ends, whichever comes first.
				runCtx, cancel := context.WithCancel(leading)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				if err := run(runCtx); err != nil {
					klog.FromContext(ctx).Error(err, "controllers stopped")
				}
			},
			OnStoppedLeading: func() { close(lost) },
			OnNewLeader: func(identity string) {
				klog.FromContext(ctx).Info("leader", "identity", identity, "self", identity == e.Identity)
			},
		},
	})
	// RunOrDie also reports a stop when ctx ends; only a stop before that is a lost Lease.
	if ctx.Err() != nil {
		return nil
	}
	<-lost
	return errors.New("lost the virt-controller lease")
}
