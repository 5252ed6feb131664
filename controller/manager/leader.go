package manager

import (
	"context"
	"errors"
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
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.Namespace, LeaseName,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: e.Identity})
	if err != nil {
		return err
	}
	lost := make(chan struct{})
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Name:            LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				m.leading.Store(true)
				if err := m.Run(ctx); err != nil {
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
