// Package launcherpods finds an instance's launcher pods in a pod cache, for virt-controller,
// which makes them, and virt-handler, which runs their domains.
//
// A pod's label and owner reference only claim an instance: anyone who may create pods in the
// namespace can set them. What virt-controller made is what it recorded in the instance's
// status.activePods, which only it writes; Active is those.
package launcherpods

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Claiming are the pods that claim vmi (its created-by label and a controller reference to
// it), newest first.
func Claiming(podLister corelisters.PodLister, vmi *v1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	all, err := podLister.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{v1.CreatedByLabel: string(vmi.UID)}))
	if err != nil {
		return nil, err
	}
	var owned []*corev1.Pod
	for _, pod := range all {
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID == vmi.UID {
			owned = append(owned, pod)
		}
	}
	sort.Slice(owned, func(i, j int) bool { return owned[j].CreationTimestamp.Before(&owned[i].CreationTimestamp) })
	return owned, nil
}

// Active keeps the pods vmi's status.activePods lists (IsActive).
func Active(vmi *v1.VirtualMachineInstance, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if IsActive(vmi, p) {
			out = append(out, p)
		}
	}
	return out
}

// IsActive says whether vmi's status.activePods lists pod, on the node it runs on.
func IsActive(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) bool {
	node, ok := vmi.Status.ActivePods[pod.UID]
	return ok && node == pod.Spec.NodeName
}
