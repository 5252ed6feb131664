package main

import (
	"context"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/test/bench/benchout"
)

// cpuSampleEvery is how often each launcher pod's CPU is read by process. Each read opens
// every process's /proc files and its containers' cgroups: at 100 pods, once a second took
// about 5% of the 2-core node's CPU (11% of one core, most of it in the kernel), CPU the
// guests boot on. A guest's boot takes minutes there and its CPU grows steadily, so the
// interpolation at its marker loses nothing at 5 s.
const cpuSampleEvery = 5 * time.Second

type scenario func(ctx context.Context, namespace string, w *watcher) ([]sample, error)

// measure runs a scenario in a namespace of its own and measures what it cost: the samples'
// latencies to Running and to their guests' markers, each launcher pod's CPU until its marker
// and its memory after, by part, the API writes made about the namespace's objects, and the
// CPU every component spent meanwhile. The namespace is deleted afterwards, and the
// next scenario starts on a quiet node.
func (b *bench) measure(ctx context.Context, namespace string, run scenario) (*result, error) {
	if err := benchout.DeleteNamespace(ctx, b.kube, namespace); err != nil {
		return nil, err
	}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	w := b.watch(ctx, namespace)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	cpu := sampleCPU(sampleCtx, w, cpuSampleEvery)
	cpuBefore, _, err := b.usage(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	samples, err := run(ctx, namespace, w)
	if err != nil {
		return nil, err
	}
	end := time.Now()
	noMarker, err := b.markers(ctx, namespace, w, samples, b.o.markerStall)
	if err != nil {
		return nil, err
	}
	booted := time.Now()
	stopSampling()
	r := &result{Count: len(samples), Seconds: end.Sub(start).Seconds(), NoMarker: noMarker}
	r.latencies(samples)
	r.split(samples, w, cpu, b.memory.Value())
	// After the markers, so the components' figures cover the guests' boots.
	cpuAfter, memory, err := b.usage(ctx)
	if err != nil {
		return nil, err
	}
	// The audit log is written in batches at most a second late. Writes count until the
	// markers, as the CPU does: events go out asynchronously, and the last instances' Started
	// events and VM status writes land after the moment every instance is Running.
	time.Sleep(3 * time.Second)
	if r.Writes, r.Events, err = countWrites(filepath.Join(b.o.cluster, "logs", "audit.log"), namespace, start, booted); err != nil {
		return nil, err
	}
	r.perVM(cpuBefore, cpuAfter)
	r.MemoryMiB = memory
	klog.InfoS("scenario done", "namespace", namespace, "count", r.Count, "runningP95", r.Latency.P95, "markerP95", r.Marker.P95)
	return r, benchout.DeleteNamespace(ctx, b.kube, namespace)
}
