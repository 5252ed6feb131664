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
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Pods finds launcher pods by the instance they claim: a pod cache indexed by
// kubevirt.io/created-by, so each lookup costs the instance's own pods, not the namespace's.
type Pods struct{ indexer cache.Indexer }

// createdByIndex indexes pods by the instance UID in their kubevirt.io/created-by label.
const createdByIndex = "launcherpods.createdBy"

// Index adds the created-by index to a pod informer that has not started. Controllers that
// share one informer may each call it.
func Index(informer cache.SharedIndexInformer) (Pods, error) {
	if _, ok := informer.GetIndexer().GetIndexers()[createdByIndex]; !ok {
		err := informer.AddIndexers(cache.Indexers{createdByIndex: func(obj any) ([]string, error) {
			if uid := obj.(metav1.Object).GetLabels()[v1.CreatedByLabel]; uid != "" {
				return []string{uid}, nil
			}
			return nil, nil
		}})
		if err != nil {
			return Pods{}, err
		}
	}
	return Pods{indexer: informer.GetIndexer()}, nil
}

// Claiming are the pods that claim vmi (its created-by label and a controller reference to
// it), newest first.
func (p Pods) Claiming(vmi *v1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	objs, err := p.indexer.ByIndex(createdByIndex, string(vmi.UID))
	if err != nil {
		return nil, err
	}
	var owned []*corev1.Pod
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Namespace != vmi.Namespace {
			continue
		}
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

// InstanceKey maps a launcher pod (or its tombstone) to the key of the instance
// controlling it, and returns the pod.
func InstanceKey(obj any) (string, *corev1.Pod, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return "", nil, false
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "VirtualMachineInstance" {
		return "", nil, false
	}
	return pod.Namespace + "/" + ref.Name, pod, true
}
