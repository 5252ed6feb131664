package main

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/examples"
)

// prototype is the name examples/vmctl-deployment.yaml clones.
const prototype = "testvm"

// vmctlDeployment is scenario b: the example vmctl Deployment (with its Role), scaled up, each
// pod cloning a halted prototype into prototype-<pod>. A sample runs from its pod's first
// sighting to its clone Running.
func (b *bench) vmctlDeployment(ctx context.Context, ns string, w *watcher) ([]sample, error) {
	if _, err := b.virt.KubevirtV1().VirtualMachines(ns).Create(ctx, b.vm(prototype, v1.RunStrategyHalted), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, name := range []string{"vmctl-rbac.yaml", "vmctl-deployment.yaml"} {
		loaded, err := examples.Load(name)
		if err != nil {
			return nil, err
		}
		objs = append(objs, loaded...)
	}
	for _, obj := range objs {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d.Spec.Replicas = ptr.To(int32(b.o.vmctlReplicas))
		}
	}
	if err := examples.Create(ctx, b.kube, b.virt, ns, objs...); err != nil {
		return nil, err
	}
	pods, err := w.podsNamed(ctx, "vmctl-", b.o.vmctlReplicas)
	if err != nil {
		return nil, err
	}
	samples := make([]sample, len(pods))
	for i, pod := range pods {
		samples[i] = sample{name: prototype + "-" + pod, created: w.at(w.podSeen, pod)}
	}
	return samples, b.instancesRunning(ctx, w, samples)
}
