package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

// watcher records when the bench first saw each pod and instance of a namespace reach a
// state: informer delivery times are finer than the API's one-second timestamps.
type watcher struct {
	mu           sync.Mutex
	podSeen      map[string]time.Time
	podRunning   map[string]time.Time
	vmiScheduled map[string]time.Time
	vmiRunning   map[string]time.Time
	// launcher maps an instance (or a floor pod's guest) to its launcher pod's name, and uid a
	// pod's name to its UID, which names its cgroup.
	launcher map[string]string
	uid      map[string]string
	changed  chan struct{}
}

func (b *bench) watch(ctx context.Context, namespace string) *watcher {
	w := &watcher{podSeen: map[string]time.Time{}, podRunning: map[string]time.Time{},
		vmiScheduled: map[string]time.Time{}, vmiRunning: map[string]time.Time{},
		launcher: map[string]string{}, uid: map[string]string{}, changed: make(chan struct{}, 1)}
	kube := kubeinformers.NewSharedInformerFactoryWithOptions(b.kube, 0, kubeinformers.WithNamespace(namespace))
	_, _ = kube.Core().V1().Pods().Informer().AddEventHandler(handler(func(obj any) {
		pod := obj.(*corev1.Pod)
		w.mu.Lock()
		w.uid[pod.Name] = string(pod.UID)
		if instance := pod.Annotations[domainAnnotation]; instance != "" {
			w.launcher[instance] = pod.Name
		}
		w.mu.Unlock()
		w.mark(w.podSeen, pod.Name, true)
		w.mark(w.podRunning, pod.Name, pod.Status.Phase == corev1.PodRunning)
	}))
	virt := informers.NewSharedInformerFactoryWithOptions(b.virt, 0, informers.WithNamespace(namespace))
	_, _ = virt.Kubevirt().V1().VirtualMachineInstances().Informer().AddEventHandler(handler(func(obj any) {
		vmi := obj.(*v1.VirtualMachineInstance)
		running := vmi.Status.Phase == v1.Running
		w.mark(w.vmiScheduled, vmi.Name, running || vmi.Status.Phase == v1.Scheduled)
		w.mark(w.vmiRunning, vmi.Name, running)
	}))
	kube.Start(ctx.Done())
	virt.Start(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	virt.WaitForCacheSync(ctx.Done())
	return w
}

func handler(f func(obj any)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, obj any) { f(obj) }}
}

func (w *watcher) mark(m map[string]time.Time, name string, reached bool) {
	if !reached {
		return
	}
	w.mu.Lock()
	if _, ok := m[name]; !ok {
		m[name] = time.Now()
	}
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// until waits until done, called under the lock after every change, says so.
func (w *watcher) until(ctx context.Context, what string, done func() (bool, string)) error {
	for {
		w.mu.Lock()
		ok, progress := done()
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s (%s): %w", what, progress, ctx.Err())
		case <-w.changed:
		case <-time.After(5 * time.Second):
		}
	}
}

// podsNamed waits until n pods whose names start with prefix were seen, and returns them.
func (w *watcher) podsNamed(ctx context.Context, prefix string, n int) ([]string, error) {
	var pods []string
	err := w.until(ctx, prefix+"* pods", func() (bool, string) {
		pods = pods[:0]
		for name := range w.podSeen {
			if strings.HasPrefix(name, prefix) {
				pods = append(pods, name)
			}
		}
		return len(pods) >= n, fmt.Sprintf("%d of %d", len(pods), n)
	})
	return pods, err
}

// allIn waits until every name has a time in m, and returns those times.
func (w *watcher) allIn(ctx context.Context, what string, m map[string]time.Time, names []string) error {
	return w.until(ctx, what, func() (bool, string) {
		n := 0
		for _, name := range names {
			if _, ok := m[name]; ok {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d of %d", n, len(names))
	})
}

// domainAnnotation names the instance a launcher pod runs (controller/vmi renders it).
const domainAnnotation = "kubevirt.io/domain"

// podOf is the launcher pod of an instance ("" while unknown).
func (w *watcher) podOf(instance string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.launcher[instance]
}

// uidOf is a pod's UID ("" while unknown).
func (w *watcher) uidOf(pod string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.uid[pod]
}

// at reads a recorded time.
func (w *watcher) at(m map[string]time.Time, name string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return m[name]
}
