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

// A scenario whose pods do not all fit the node would wait for ever on the ones the scheduler
// leaves Pending: on this 24 GiB, 2-core machine 100 launcher pods fit (224 MiB and 11m of CPU
// each for an 80 MiB guest), but not 100 launcher pods beside 100 vmctl pods. So each scenario
// runs as many items as the node's allocatable CPU and memory hold, beside what its other pods
// already request, and the report says when that is fewer than asked.

// fitted are the resources the node's pods are scheduled by.
var fitted = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// fit is how many of want items, each requesting perItem (milli-units) of a resource, the node holds.
func fit(want int, allocatable, requested, perItem int64) int {
	if perItem <= 0 {
		return want
	}
	return max(0, min(want, int((allocatable-requested)/perItem)))
}

// freeResources is the node's allocatable CPU and memory and what the pods on it request,
// leaving out the bench's own namespaces: each scenario deletes its namespace before it starts.
func (b *bench) freeResources(ctx context.Context) (allocatable, requested corev1.ResourceList, err error) {
	node, err := b.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	pods, err := b.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", b.node).String()})
	if err != nil {
		return nil, nil, err
	}
	requested = corev1.ResourceList{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if ownNamespace(p.Namespace) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(requested, podRequests(p))
	}
	return node.Status.Allocatable, requested, nil
}

func podRequests(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

func add(sum, more corev1.ResourceList) {
	for _, r := range fitted {
		q := sum[r]
		q.Add(more[r])
		sum[r] = q
	}
}

// vmctlPodRequests is what a pod of examples/vmctl-deployment.yaml requests.
func vmctlPodRequests() (corev1.ResourceList, error) {
	objs, err := examples.Load("vmctl-deployment.yaml")
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if d, ok := obj.(*appsv1.Deployment); ok {
			return podRequests(&corev1.Pod{Spec: d.Spec.Template.Spec}), nil
		}
	}
	return nil, fmt.Errorf("examples/vmctl-deployment.yaml has no Deployment")
}

// fitToNode lowers the scenarios' counts to what the node's CPU and memory hold, saying so.
func (b *bench) fitToNode(ctx context.Context, r *report) error {
	allocatable, requested, err := b.freeResources(ctx)
	if err != nil {
		return err
	}
	launcher := podRequests(b.floorPod("fit", floorNamespace))
	vmctl, err := vmctlPodRequests()
	if err != nil {
		return err
	}
	pair := corev1.ResourceList{}
	add(pair, launcher)
	add(pair, vmctl)
	limit := func(what string, want *int, perItem corev1.ResourceList) {
		for _, res := range fitted {
			a, req, each := allocatable[res], requested[res], perItem[res]
			if n := fit(*want, a.MilliValue(), req.MilliValue(), each.MilliValue()); n < *want {
				capped := fmt.Sprintf("%s: %d instead of %d, as many as the node's allocatable %s (%s) holds beside the %s its other pods request, at %s each",
					what, n, *want, res, a.String(), req.String(), each.String())
				klog.InfoS("fewer items than asked", "scenario", capped)
				r.Capped = append(r.Capped, capped)
				*want = n
			}
		}
	}
	asked := b.o.vms + b.o.vmctlReplicas
	limit("(a) VMs and their floor", &b.o.vms, launcher)
	limit("(b) vmctl replicas and their floor", &b.o.vmctlReplicas, pair)
	if asked > 0 && b.o.vms+b.o.vmctlReplicas == 0 {
		return fmt.Errorf("the node holds no launcher pod: %v", r.Capped)
	}
	return nil
}
