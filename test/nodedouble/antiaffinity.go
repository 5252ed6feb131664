package nodedouble

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// antiAffinityMessage is kube-scheduler's message for a pod whose required anti-affinity
// excludes the one node.
const antiAffinityMessage = "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."

// repelled says whether the pod's required anti-affinity (per node: topology key
// kubernetes.io/hostname; the pod's namespace) excludes the double's node, because a live pod
// there matches one of its terms. A migration's target pod is refused this way on the node
// that runs its source.
func (d *Double) repelled(pod *corev1.Pod) bool {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return false
	}
	for _, term := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			continue
		}
		pods, err := d.podLister.Pods(pod.Namespace).List(selector)
		if err != nil {
			continue
		}
		for _, p := range pods {
			ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			if p.UID != pod.UID && p.Spec.NodeName == d.nodeName && !ended {
				return true
			}
		}
	}
	return false
}
