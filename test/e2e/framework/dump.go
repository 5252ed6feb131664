package framework

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Dump logs what a failing test needs to see in a namespace: its VMs and VMIs, its pods with
// their state, its events in time order, and the last lines of every container's log.
func (f *Framework) Dump(namespace string) {
	ctx := context.Background()
	var b strings.Builder
	fmt.Fprintf(&b, "===== dump of namespace %s =====\n", namespace)
	f.dumpVirt(ctx, &b, namespace)
	pods, err := f.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "list pods: %v\n", err)
	} else {
		for i := range pods.Items {
			dumpPod(&b, &pods.Items[i])
		}
	}
	f.dumpEvents(ctx, &b, namespace)
	if err == nil {
		for _, pod := range pods.Items {
			for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
				f.dumpLog(ctx, &b, &pod, c.Name)
			}
		}
	}
	f.t.Log(b.String())
}

func (f *Framework) dumpVirt(ctx context.Context, b *strings.Builder, namespace string) {
	if vms, err := f.Virt.KubevirtV1().VirtualMachines(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, vm := range vms.Items {
			fmt.Fprintf(b, "vm %s: status=%s created=%v ready=%v conditions=%v\n",
				vm.Name, vm.Status.PrintableStatus, vm.Status.Created, vm.Status.Ready, vm.Status.Conditions)
		}
	}
	if vmis, err := f.Virt.KubevirtV1().VirtualMachineInstances(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, vmi := range vmis.Items {
			fmt.Fprintf(b, "vmi %s: phase=%s node=%s reason=%q conditions=%v\n",
				vmi.Name, vmi.Status.Phase, vmi.Status.NodeName, vmi.Status.Reason, vmi.Status.Conditions)
		}
	}
}

func dumpPod(b *strings.Builder, pod *corev1.Pod) {
	fmt.Fprintf(b, "pod %s: phase=%s node=%s ip=%s\n", pod.Name, pod.Status.Phase, pod.Spec.NodeName, pod.Status.PodIP)
	for _, c := range pod.Status.Conditions {
		fmt.Fprintf(b, "  condition %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		fmt.Fprintf(b, "  container %s ready=%v restarts=%d state=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
	}
}

func (f *Framework) dumpEvents(ctx context.Context, b *strings.Builder, namespace string) {
	events, err := f.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(b, "list events: %v\n", err)
		return
	}
	sort.Slice(events.Items, func(i, j int) bool {
		return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp)
	})
	for _, e := range events.Items {
		fmt.Fprintf(b, "event %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}

func (f *Framework) dumpLog(ctx context.Context, b *strings.Builder, pod *corev1.Pod, container string) {
	data, err := f.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: container, TailLines: ptr.To[int64](100),
	}).DoRaw(ctx)
	if err != nil {
		fmt.Fprintf(b, "----- log %s/%s: %v\n", pod.Name, container, err)
		return
	}
	fmt.Fprintf(b, "----- log %s/%s\n%s\n", pod.Name, container, data)
}
