package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

// counter counts the objects that reached a state, as an informer reports them.
type counter struct {
	mu      sync.Mutex
	reached map[string]bool
	changed chan struct{}
}

func newCounter() *counter {
	return &counter{reached: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (c *counter) observe(name string, reached bool) {
	if !reached {
		return
	}
	c.mu.Lock()
	c.reached[name] = true
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reached)
}

func (c *counter) waitFor(ctx context.Context, n int) error {
	for c.count() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d reached the state: %w", c.count(), n, ctx.Err())
		case <-c.changed:
		}
	}
	return nil
}

func (c *counter) handler(reached func(obj any) (string, bool)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(reached(obj)) },
		UpdateFunc: func(_, obj any) { c.observe(reached(obj)) },
	}
}

// podsRunning counts the namespace's pods that reached phase Running.
func podsRunning(ctx context.Context, kube kubernetes.Interface, namespace string) *counter {
	c := newCounter()
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(namespace))
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(c.handler(func(obj any) (string, bool) {
		pod := obj.(*corev1.Pod)
		return pod.Name, pod.Status.Phase == corev1.PodRunning
	}))
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c
}

// instancesScheduled counts the namespace's VMIs that exist, and those that reached phase
// Scheduled (or later).
func instancesScheduled(ctx context.Context, virt versioned.Interface, namespace string) (created, scheduled *counter) {
	created, scheduled = newCounter(), newCounter()
	factory := informers.NewSharedInformerFactoryWithOptions(virt, 0, informers.WithNamespace(namespace))
	informer := factory.Kubevirt().V1().VirtualMachineInstances().Informer()
	_, _ = informer.AddEventHandler(created.handler(func(obj any) (string, bool) {
		return obj.(*v1.VirtualMachineInstance).Name, true
	}))
	_, _ = informer.AddEventHandler(scheduled.handler(func(obj any) (string, bool) {
		vmi := obj.(*v1.VirtualMachineInstance)
		return vmi.Name, vmi.Status.Phase == v1.Scheduled || vmi.Status.Phase == v1.Running
	}))
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return created, scheduled
}
