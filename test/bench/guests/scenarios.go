package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/testguest"
)

type bench struct {
	kube   kubernetes.Interface
	virt   versioned.Interface
	o      options
	memory resource.Quantity
	node   string
}

// sample is one workload item's way: when it was created (or, for a Deployment, when its pod
// was first seen), Scheduled, Running, and when its guest printed its marker. Its instance (or
// floor pod) is named name, and runs in the launcher pod named pod.
type sample struct {
	name, pod                           string
	created, scheduled, running, marker time.Time
}

// realNode is the node that runs the pods: kwok's fake nodes cannot boot guests, and other
// real nodes are cordoned (make bench measures one node).
func (b *bench) realNode(ctx context.Context) (string, error) {
	nodes, err := b.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type!=kwok"})
	if err != nil {
		return "", err
	}
	var schedulable []string
	for _, n := range nodes.Items {
		if !n.Spec.Unschedulable {
			schedulable = append(schedulable, n.Name)
		}
	}
	if len(schedulable) != 1 {
		return "", fmt.Errorf("want one schedulable real node, found %d (%v): cordon the others", len(schedulable), schedulable)
	}
	return schedulable[0], nil
}

func (b *bench) guestSpec(name string) v1.VirtualMachineInstanceSpec {
	return testguest.Spec(name, b.memory)
}

// paced calls create for i in [0, n) with the bench's interval between calls, and records
// the time just before each call.
func (b *bench) paced(ctx context.Context, n int, create func(i int) (string, error)) ([]sample, error) {
	samples := make([]sample, 0, n)
	for i := range n {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(b.o.interval):
			}
		}
		start := time.Now()
		name, err := create(i)
		if err != nil {
			return nil, err
		}
		samples = append(samples, sample{name: name, created: start})
	}
	return samples, nil
}

// directVMs is scenario a: VMs with runStrategy Always, created one by one.
func (b *bench) directVMs(ctx context.Context, ns string, w *watcher) ([]sample, error) {
	samples, err := b.paced(ctx, b.o.vms, func(i int) (string, error) {
		vm := b.vm(fmt.Sprintf("vm-%03d", i), v1.RunStrategyAlways)
		_, err := b.virt.KubevirtV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
		return vm.Name, err
	})
	if err != nil {
		return nil, err
	}
	return samples, b.instancesRunning(ctx, w, samples)
}

func (b *bench) instancesRunning(ctx context.Context, w *watcher, samples []sample) error {
	if err := w.allIn(ctx, "instances Running", w.vmiRunning, names(samples)); err != nil {
		return err
	}
	for i := range samples {
		samples[i].scheduled = w.at(w.vmiScheduled, samples[i].name)
		samples[i].running = w.at(w.vmiRunning, samples[i].name)
	}
	return nil
}

func (b *bench) vm(name string, strategy v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(strategy),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "bench-vm"}},
				Spec:       b.guestSpec(name),
			},
		},
	}
}

func names(samples []sample) []string {
	out := make([]string, len(samples))
	for i, s := range samples {
		out[i] = s.name
	}
	return out
}

// launcherImage is virt-launcher's image as make images tags it.
const launcherImage = "vmctl/virt-launcher:devel"
