// Package metrics is virt-controller's Prometheus collector: KubeVirt's cluster-wide metrics
// (kubevirt_vmi_phase_count, kubevirt_vm_info, the VM status timestamps, the controller's
// leading and ready status) under KubeVirt's names and labels, so its dashboards and alerts
// work (docs/metrics.md). Everything is computed from the informers' caches when Prometheus
// scrapes: no loop keeps gauges up to date, and a scrape costs one pass over the caches.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
)

// Label values KubeVirt uses: none for what an object does not say, other for an instance
// type or preference outside the vendors whose names are shown.
const (
	none  = "<none>"
	other = "<other>"
)

// Collector collects virt-controller's metrics from its caches.
type Collector struct {
	VMIs listers.VirtualMachineInstanceLister
	VMs  listers.VirtualMachineLister
	// Synced reports the caches complete. They fill only on the elected replica: before that
	// the object metrics are left out rather than reported as zero.
	Synced func() bool
	// Leading reports this replica as the elected one.
	Leading func() bool
	// Ready is the replica's readiness check.
	Ready func() error
	// Types reads instance types and preferences, for their vendor; nil shows every named
	// one as <other>.
	Types Types
}

// Types reads instance types and preferences (pkg/instancetype's ListerGetter does, from
// virt-controller's caches).
type Types interface {
	Instancetype(namespace, name string) (*itv1beta1.VirtualMachineInstancetype, error)
	ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error)
	Preference(namespace, name string) (*itv1beta1.VirtualMachinePreference, error)
	ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error)
}

var (
	leadingDesc = prometheus.NewDesc("kubevirt_virt_controller_leading_status",
		"Indication for an operating virt-controller.", nil, nil)
	readyDesc = prometheus.NewDesc("kubevirt_virt_controller_ready_status",
		"Indication for a virt-controller that is ready to take the lead.", nil, nil)
)

// Describe sends every metric's description: the collector is checked by the registry.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- leadingDesc
	ch <- readyDesc
	ch <- phaseCountDesc
	ch <- vmInfoDesc
	for _, g := range statusGroups {
		ch <- g.desc
	}
}

// Collect sends the metrics of the caches as they are now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(leadingDesc, prometheus.GaugeValue, boolValue(c.Leading()))
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, boolValue(c.Ready() == nil))
	if !c.Synced() {
		return
	}
	vmis, err := c.VMIs.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "listing instances for metrics")
	}
	c.collectPhaseCount(ch, vmis)
	vms, err := c.VMs.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "listing virtual machines for metrics")
	}
	c.collectVMs(ch, vms)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// annotationOr is the annotation's value, or none.
func annotationOr(annotations map[string]string, key string) string {
	if v, ok := annotations[key]; ok {
		return v
	}
	return none
}
