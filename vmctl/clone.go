package vmctl

import (
	"errors"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Labels and annotations vmctl puts on a clone (and its template, so the instance and its
// launcher pod carry the labels too).
const (
	// PrototypeLabel names the prototype: `kubectl get vm -l vmctl.kubevirt.io/prototype=testvm`.
	PrototypeLabel = "vmctl.kubevirt.io/prototype"
	// PodLabel names the vmctl pod the clone belongs to.
	PodLabel = "vmctl.kubevirt.io/pod"
	// PodUIDAnnotation is the UID of that pod: a clone is vmctl's to adopt only when it matches,
	// so a pod re-created under the same name (a StatefulSet's) never takes over a clone of the old.
	PodUIDAnnotation = "vmctl.kubevirt.io/pod-uid"
	// PrototypeGenerationAnnotation is the prototype's metadata.generation the clone was made
	// from; putting it in the pod template's annotations rolls clones onto a changed prototype.
	PrototypeGenerationAnnotation = "vmctl.kubevirt.io/prototype-generation"
	// lastApplied is kubectl's record of the prototype's manifest; on a clone it would make
	// `kubectl apply` of the prototype's file believe it manages the clone.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// nodeNameField is the node field DaemonSets pin their pods with: unlike the
// kubernetes.io/hostname label, it is always the node's name.
const nodeNameField = "metadata.name"

// ErrInvalidPrototype is wrapped by the errors Clone returns for prototypes it cannot clone.
var ErrInvalidPrototype = errors.New("invalid prototype")

// Clone derives the VM that pod runs from proto, in namespace. It is a copy of the prototype
// with a name of its own (<proto>-<pod>), forced to run, pinned to the pod's node, labelled
// with the prototype and the pod, without the identity every clone must not share (firmware
// UUID, MAC addresses), and owned by the pod so the garbage collector removes it when the pod
// is gone, however the pod ended. The prototype volumes named in podVolumes become the pod's
// own claims (bindPodVolumes).
func Clone(proto *v1.VirtualMachine, pod *corev1.Pod, namespace string, podVolumes map[string]string) (*v1.VirtualMachine, error) {
	if proto.Spec.Template == nil {
		return nil, fmt.Errorf("%w: VirtualMachine %s/%s has no spec.template", ErrInvalidPrototype, proto.Namespace, proto.Name)
	}
	if proto.Spec.Running != nil && proto.Spec.RunStrategy != nil {
		return nil, fmt.Errorf("%w: VirtualMachine %s/%s sets both spec.running and spec.runStrategy", ErrInvalidPrototype, proto.Namespace, proto.Name)
	}
	if pod.Spec.NodeName == "" {
		return nil, fmt.Errorf("pod %s/%s is not scheduled to a node yet", pod.Namespace, pod.Name)
	}

	ours := map[string]string{PrototypeLabel: labelValue(proto.Name), PodLabel: labelValue(pod.Name)}
	clone := &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name:        CloneName(proto.Name, pod.Name),
			Namespace:   namespace,
			Labels:      merged(proto.Labels, ours),
			Annotations: merged(proto.Annotations, map[string]string{PodUIDAnnotation: string(pod.UID), PrototypeGenerationAnnotation: strconv.FormatInt(proto.Generation, 10)}),
		},
		Spec: *proto.Spec.DeepCopy(),
	}
	delete(clone.Annotations, lastApplied)
	// The garbage collector only follows owners in the dependent's namespace. No
	// blockOwnerDeletion: it would need update on pods/finalizers, and nothing waits for it.
	if namespace == pod.Namespace {
		clone.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
		}}
	}

	// Run the way the prototype says how: running and runStrategy together are rejected.
	if proto.Spec.Running != nil {
		clone.Spec.Running = ptr.To(true)
	} else {
		clone.Spec.RunStrategy = ptr.To(v1.RunStrategyAlways)
	}

	tmpl := clone.Spec.Template
	tmpl.ObjectMeta.Labels = merged(tmpl.ObjectMeta.Labels, ours)
	spec := &tmpl.Spec
	if spec.Domain.Firmware != nil {
		spec.Domain.Firmware.UUID = ""
	}
	for i := range spec.Domain.Devices.Interfaces {
		spec.Domain.Devices.Interfaces[i].MacAddress = ""
	}
	spec.Affinity = pinned(spec.Affinity, pod.Spec.NodeName)
	if err := bindPodVolumes(spec, pod, podVolumes); err != nil {
		return nil, err
	}
	// A drain must not evict the clone's launcher pod behind the workload's back: the clone
	// moves when its vmctl pod is evicted, which the workload's PodDisruptionBudget governs.
	// External is KubeVirt's word for "the VM's owner moves it".
	if spec.EvictionStrategy == nil {
		spec.EvictionStrategy = ptr.To(v1.EvictionStrategyExternal)
	}
	return clone, nil
}

// pinned adds "node name is node" to the affinity's required node terms. Terms are ORed, the
// requirements within a term ANDed, so the field goes into every term: the prototype's own
// placement still holds, narrowed to the pod's node. nodeSelector is left as it was; the
// scheduler ANDs it with the affinity.
func pinned(affinity *corev1.Affinity, node string) *corev1.Affinity {
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := corev1.NodeSelectorRequirement{Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, req)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return affinity
}

// merged is base with extra laid over it, as a new map.
func merged(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}
