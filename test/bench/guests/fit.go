package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/test/examples"
)

// A scenario whose pods do not all fit the node's memory would wait for ever on the ones the
// scheduler leaves Pending: on this 24 GiB machine 100 launcher pods fit (224 MiB each for an
// 80 MiB guest), but not 100 launcher pods beside 100 vmctl pods. So each scenario runs as many
// items as the node's allocatable memory holds, beside what its other pods already request,
// and the report says when that is fewer than asked.

// fit is how many of want items, each requesting perItem bytes of memory, the node holds.
func fit(want int, allocatable, requested, perItem int64) int {
	if perItem <= 0 {
		return want
	}
	return max(0, min(want, int((allocatable-requested)/perItem)))
}

// freeMemory is the node's allocatable memory and what the pods on it request, leaving out
// the bench's own namespaces: each scenario deletes its namespace before it starts.
func (b *bench) freeMemory(ctx context.Context) (allocatable, requested int64, err error) {
	node, err := b.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return 0, 0, err
	}
	pods, err := b.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", b.node).String()})
	if err != nil {
		return 0, 0, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if ownNamespace(p.Namespace) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		requested += memoryRequest(p)
	}
	return node.Status.Allocatable.Memory().Value(), requested, nil
}

func memoryRequest(p *corev1.Pod) int64 {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return requests.Memory().Value()
}

// vmctlPodMemory is what a pod of examples/vmctl-deployment.yaml requests.
func vmctlPodMemory() (int64, error) {
	objs, err := examples.Load("vmctl-deployment.yaml")
	if err != nil {
		return 0, err
	}
	for _, obj := range objs {
		if d, ok := obj.(*appsv1.Deployment); ok {
			return memoryRequest(&corev1.Pod{Spec: d.Spec.Template.Spec}), nil
		}
	}
	return 0, fmt.Errorf("examples/vmctl-deployment.yaml has no Deployment")
}

// fitToNode lowers the scenarios' counts to what the node's memory holds, saying so.
func (b *bench) fitToNode(ctx context.Context, r *report) error {
	allocatable, requested, err := b.freeMemory(ctx)
	if err != nil {
		return err
	}
	launcher := memoryRequest(b.floorPod("fit", floorNamespace))
	vmctl, err := vmctlPodMemory()
	if err != nil {
		return err
	}
	mib := func(v int64) int64 { return v >> 20 }
	limit := func(what string, want *int, perItem int64) {
		if n := fit(*want, allocatable, requested, perItem); n < *want {
			capped := fmt.Sprintf("%s: %d instead of %d, as many as the node's %d MiB of allocatable memory holds beside the %d MiB its other pods request, at %d MiB each",
				what, n, *want, mib(allocatable), mib(requested), mib(perItem))
			klog.InfoS("fewer items than asked", "scenario", capped)
			r.Capped = append(r.Capped, capped)
			*want = n
		}
	}
	limit("(a) VMs and their floor", &b.o.vms, launcher)
	limit("(b) vmctl replicas and their floor", &b.o.vmctlReplicas, launcher+vmctl)
	if b.o.vms == 0 {
		return fmt.Errorf("the node's memory holds no launcher pod: %v", r.Capped)
	}
	return nil
}
