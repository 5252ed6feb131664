// Package workloop is the work loop virt-controller's controllers and virt-handler share: a
// rate-limited queue of namespace/name keys fed to one sync function per key, as in
// Kubernetes' ReplicaSet controller.
package workloop

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Loop feeds keys from a rate-limited queue to a sync function: a failed sync is retried
// with per-key exponential backoff, a successful one resets it.
type Loop struct {
	Name   string
	Queue  workqueue.TypedRateLimitingInterface[string]
	Synced []cache.InformerSynced
	Sync   func(ctx context.Context, key string) error

	mu   sync.Mutex
	busy map[string]time.Time // keys being synced, since when
}

// Wedged reports a sync that has run longer than limit: every step of a sync is bounded, so
// one that is not done is stuck, and the liveness probe should restart the component.
func (l *Loop) Wedged(limit time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, since := range l.busy {
		if d := time.Since(since); d > limit {
			return fmt.Errorf("%s: the sync of %s has run for %s", l.Name, key, d.Round(time.Second))
		}
	}
	return nil
}

func (l *Loop) track(key string) (done func()) {
	l.mu.Lock()
	if l.busy == nil {
		l.busy = map[string]time.Time{}
	}
	l.busy[key] = time.Now()
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.busy, key)
		l.mu.Unlock()
	}
}

// NewQueue is the queue every controller uses, named for its metrics.
func NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// Enqueue adds an object's key (tombstones included) to the queue.
func Enqueue(queue workqueue.TypedInterface[string], obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	queue.Add(key)
}

// EnqueueHandler enqueues an object's own key on every add, update and delete.
func EnqueueHandler(queue workqueue.TypedInterface[string]) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { Enqueue(queue, obj) },
		UpdateFunc: func(_, obj any) { Enqueue(queue, obj) },
		DeleteFunc: func(obj any) { Enqueue(queue, obj) },
	}
}

// Run waits for the caches, then runs workers until ctx ends and they have finished.
func (l *Loop) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer l.Queue.ShutDown()
	if !cache.WaitForNamedCacheSync(l.Name, ctx.Done(), l.Synced...) {
		return fmt.Errorf("%s: caches did not sync", l.Name)
	}
	// Return only once every worker has: a restarted controller must not overlap the old.
	var running sync.WaitGroup
	for range workers {
		running.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for l.processNext(ctx) {
				}
			}, time.Second)
		})
	}
	<-ctx.Done()
	l.Queue.ShutDown()
	running.Wait()
	return nil
}

func (l *Loop) processNext(ctx context.Context) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	done := l.track(key)
	err := l.Sync(ctx, key)
	done()
	if err != nil {
		if apierrors.IsConflict(err) {
			// A write raced the informer: routine, the retry reads the newer object.
			klog.FromContext(ctx).V(4).Info("sync conflicted, retrying", "controller", l.Name, "key", key)
		} else {
			utilruntime.HandleErrorWithContext(ctx, err, "sync failed", "controller", l.Name, "key", key)
		}
		l.Queue.AddRateLimited(key)
		return true
	}
	l.Queue.Forget(key)
	return true
}
