package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Annotations KubeVirt reads the phase count's labels from: the template's vm.kubevirt.io/*
// (set by VM templates and tools), and the instance type and preference an instance was
// made with (set by the VM controller, controller/vm).
const (
	osAnnotation                  = "vm.kubevirt.io/os"
	workloadAnnotation            = "vm.kubevirt.io/workload"
	flavorAnnotation              = "vm.kubevirt.io/flavor"
	instancetypeAnnotation        = "kubevirt.io/instancetype-name"
	clusterInstancetypeAnnotation = "kubevirt.io/cluster-instancetype-name"
	preferenceAnnotation          = "kubevirt.io/preference-name"
	clusterPreferenceAnnotation   = "kubevirt.io/cluster-preference-name"
	vendorLabel                   = "instancetype.kubevirt.io/vendor"
)

// Instance type and preference names are shown only for these vendors (their vendorLabel),
// as KubeVirt does: a user's own names stay out of the metrics, whose label values should
// come from a small set.
var shownVendors = map[string]bool{"kubevirt.io": true, "redhat.com": true}

// phaseCountDesc has KubeVirt's labels for the instance count, except the guest_os_* ones,
// which come from a guest agent this platform does not talk to.
var phaseCountDesc = prometheus.NewDesc("kubevirt_vmi_phase_count",
	"Sum of VMIs per phase and node. `phase` can be one of the following: [`Pending`, `Scheduling`, `Scheduled`, `Running`, `Succeeded`, `Failed`, `Unknown`].",
	[]string{"node", "phase", "os", "workload", "flavor", "instance_type", "preference"}, nil)

// phaseKey is one series of the count: an instance's label values.
type phaseKey struct {
	node, phase, os, workload, flavor, instancetype, preference string
}

// collectPhaseCount counts the instances by their label values. The phase is lower case, as
// KubeVirt reports it ("" before the controller first wrote one).
func (c *Collector) collectPhaseCount(ch chan<- prometheus.Metric, vmis []*v1.VirtualMachineInstance) {
	counts := map[phaseKey]int{}
	for _, vmi := range vmis {
		a := vmi.Annotations
		counts[phaseKey{
			node:         vmi.Status.NodeName,
			phase:        strings.ToLower(string(vmi.Status.Phase)),
			os:           annotationOr(a, osAnnotation),
			workload:     annotationOr(a, workloadAnnotation),
			flavor:       annotationOr(a, flavorAnnotation),
			instancetype: c.typeOf(vmi.Namespace, a, instancetypeAnnotation, clusterInstancetypeAnnotation, v1.InstancetypeKind, v1.ClusterInstancetypeKind),
			preference:   c.typeOf(vmi.Namespace, a, preferenceAnnotation, clusterPreferenceAnnotation, v1.PreferenceKind, v1.ClusterPreferenceKind),
		}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(phaseCountDesc, prometheus.GaugeValue, float64(n),
			k.node, k.phase, k.os, k.workload, k.flavor, k.instancetype, k.preference)
	}
}

// typeOf is the instance type (or preference) an instance names in its annotations, the
// namespaced one first, as typeName shows it; <none> when it names none.
func (c *Collector) typeOf(namespace string, annotations map[string]string, key, clusterKey, kind, clusterKind string) string {
	if name, ok := annotations[key]; ok {
		return c.typeName(kind, namespace, name)
	}
	if name, ok := annotations[clusterKey]; ok {
		return c.typeName(clusterKind, "", name)
	}
	return none
}

// typeName shows an instance type or preference of a kind (namespace "" for the cluster-wide
// kinds): its name when a shown vendor made it, <other> when another did or it cannot be
// read, <none> for a kind that is none of the four.
func (c *Collector) typeName(kind, namespace, name string) string {
	if c.Types == nil {
		return other
	}
	switch kind {
	case v1.InstancetypeKind:
		return shown(c.Types.Instancetype(namespace, name))
	case v1.ClusterInstancetypeKind:
		return shown(c.Types.ClusterInstancetype(name))
	case v1.PreferenceKind:
		return shown(c.Types.Preference(namespace, name))
	case v1.ClusterPreferenceKind:
		return shown(c.Types.ClusterPreference(name))
	}
	return none
}

func shown[T metav1.Object](obj T, err error) string {
	if err != nil || !shownVendors[obj.GetLabels()[vendorLabel]] {
		return other
	}
	return obj.GetName()
}
