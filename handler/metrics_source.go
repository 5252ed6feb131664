package handler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/metrics"
)

// Metrics is the collector of the node's per-instance kubevirt_vmi_* metrics (handler/metrics).
func (c *Controller) Metrics() *metrics.Collector {
	return &metrics.Collector{Node: c.opts.NodeName, Instances: c.metricInstances}
}

// metricInstances are the node's running instances whose launcher the handler is connected
// to. A scrape never dials a launcher nor waits on one whose faults keep it away from the
// workers (launcherGate): only the instance's sync does that, with its own backoff.
func (c *Controller) metricInstances() []metrics.Instance {
	vmis, err := c.vmiLister.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "listing instances for metrics")
		return nil
	}
	var out []metrics.Instance
	for _, vmi := range vmis {
		if vmi.Status.Phase != v1.Running || vmi.Status.NodeName != c.opts.NodeName {
			continue
		}
		if c.gate.closed(cache.MetaObjectToName(vmi).String()) > 0 {
			continue
		}
		pod, err := c.launcherPod(vmi)
		if err != nil || pod == nil || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		lv := c.conns.lookup(pod.UID)
		if lv == nil {
			continue
		}
		out = append(out, metrics.Instance{Namespace: vmi.Namespace, Name: vmi.Name, Stats: func() (metrics.DomainStats, error) {
			return c.domainStats(vmi, pod.UID, lv)
		}})
	}
	return out
}

// domainStats reads the instance's statistics and puts the instance's names on its devices:
// the spec's interface (and its network) for a tap, the spec's disk for a target.
func (c *Controller) domainStats(vmi *v1.VirtualMachineInstance, podUID types.UID, lv Libvirt) (metrics.DomainStats, error) {
	name := DomainName(vmi)
	params, err := lv.DomainStats(name)
	if err != nil {
		return metrics.DomainStats{}, err
	}
	st := metrics.Parse(params)
	dev, err := c.devices(podUID, lv, name, vmi)
	if err != nil {
		return metrics.DomainStats{}, err
	}
	for i := range st.Blocks {
		if d, ok := dev.drives[st.Blocks[i].Name]; ok {
			st.Blocks[i].Name = d
		}
	}
	taps, _ := attachments(vmi)
	for i := range st.Nets {
		for iface, tap := range taps {
			if tap == st.Nets[i].Name {
				st.Nets[i].Name = iface
			}
		}
		st.Nets[i].Network = networkOf(vmi, st.Nets[i].Name)
	}
	return st, nil
}

// networkOf is the network an interface of the spec is on (KubeVirt pairs them by name), ""
// when the spec has none of that name.
func networkOf(vmi *v1.VirtualMachineInstance, iface string) string {
	for _, n := range vmi.Spec.Networks {
		if n.Name == iface {
			return n.Name
		}
	}
	return ""
}
