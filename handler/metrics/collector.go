// Package metrics is virt-handler's Prometheus collector: each running instance of the node's
// CPU, memory, network and storage statistics, read from its launcher's libvirt when
// Prometheus scrapes, under KubeVirt's metric names and labels (docs/metrics.md).
//
// A launcher's libvirtd belongs to a tenant and may hang: each instance's read is bounded by
// its own timeout, and the whole scrape by another, so one launcher costs the scrape its own
// series only, never the others'.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
)

// Instance is one running instance of the node, and how to read its domain's statistics.
type Instance struct {
	Namespace, Name string
	// Stats reads the statistics, with the instance's interface and disk names in. It may
	// block: Collect stops waiting for it after the instance's timeout.
	Stats func() (DomainStats, error)
}

// Bounds of a scrape. Reading one launcher's statistics takes milliseconds; Prometheus'
// default scrape timeout is 10 s.
const (
	DefaultInstanceTimeout = 3 * time.Second
	DefaultScrapeTimeout   = 8 * time.Second
	DefaultParallel        = 4
)

// Collector collects the statistics of the node's instances at each scrape.
type Collector struct {
	// Node is this node's name, every series' node label.
	Node string
	// Instances lists the node's running instances.
	Instances func() []Instance
	// InstanceTimeout bounds the wait for one instance, ScrapeTimeout the whole collection
	// (instances not started by then are left out), Parallel the reads at once; zero values
	// are the defaults.
	InstanceTimeout, ScrapeTimeout time.Duration
	Parallel                       int
}

// Describe sends every metric's description: the collector is checked by the registry.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range allMetrics {
		ch <- m.desc
	}
}

// Collect reads the instances' statistics, a few at a time, and sends what came in time.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	instanceTimeout := orDefault(c.InstanceTimeout, DefaultInstanceTimeout)
	deadline := time.Now().Add(orDefault(c.ScrapeTimeout, DefaultScrapeTimeout))
	parallel := c.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	instances := c.Instances()
	for i, inst := range instances {
		if !acquire(slots, deadline) {
			klog.InfoS("metrics: the scrape's time is up, instances left out", "count", len(instances)-i)
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			st, err := read(inst, min(instanceTimeout, time.Until(deadline)))
			if err != nil {
				klog.V(2).InfoS("metrics: no statistics", "vmi", inst.Namespace+"/"+inst.Name, "err", err)
				return
			}
			c.send(ch, inst, st)
		})
	}
	wg.Wait()
}

// acquire takes a slot, waiting until the deadline at most.
func acquire(slots chan struct{}, deadline time.Time) bool {
	wait := time.Until(deadline)
	if wait <= 0 {
		return false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	}
}

// read runs inst.Stats and waits for it at most timeout. A read that takes longer is left to
// finish on its own (the launcher connection's own timeouts end it) and its result dropped.
func read(inst Instance, timeout time.Duration) (DomainStats, error) {
	type result struct {
		st  DomainStats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := inst.Stats()
		done <- result{st, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.st, r.err
	case <-timer.C:
		return DomainStats{}, errTimeout{timeout}
	}
}

type errTimeout struct{ after time.Duration }

func (e errTimeout) Error() string { return "the launcher did not answer within " + e.after.String() }

// send turns one instance's statistics into its series.
func (c *Collector) send(ch chan<- prometheus.Metric, inst Instance, st DomainStats) {
	base := []string{c.Node, inst.Namespace, inst.Name}
	for _, m := range domainMetrics {
		if v, ok := st.Domain[m.field]; ok {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v*m.scale, base...)
		}
	}
	for _, cpu := range st.VCPUs {
		for _, m := range vcpuMetrics {
			v, ok := cpu.Values[m.field]
			if !ok {
				continue
			}
			labels := append(append([]string{}, base...), cpu.Name)
			if m.desc == vcpuSecondsDesc {
				labels = append(labels, vcpuState(cpu.Values))
			}
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v*m.scale, labels...)
		}
	}
	for _, net := range st.Nets {
		for _, m := range netMetrics {
			if v, ok := net.Values[m.field]; ok {
				ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v*m.scale, append(append([]string{}, base...), net.Name, net.Network)...)
			}
		}
	}
	for _, blk := range st.Blocks {
		for _, m := range blockMetrics {
			if v, ok := blk.Values[m.field]; ok {
				ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v*m.scale, append(append([]string{}, base...), blk.Name)...)
			}
		}
	}
}

// vcpuState is libvirt's vCPU state (virVcpuState) as KubeVirt names it.
func vcpuState(values map[string]float64) string {
	state, ok := values["state"]
	switch {
	case !ok:
		return "unknown"
	case state == 0:
		return "offline"
	case state == 1:
		return "running"
	case state == 2:
		return "blocked"
	}
	return "unknown"
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
