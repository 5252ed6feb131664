package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// guest is a running test guest's statistics, as Parse and the handler's renaming give them.
func guest() DomainStats {
	return DomainStats{
		Domain: map[string]float64{"cpu.time": 3e9, "cpu.user": 1e9, "balloon.rss": 2048, "balloon.maximum": 131072, "balloon.current": 131072},
		VCPUs:  []Device{{Name: "0", Values: map[string]float64{"state": 1, "time": 2.5e9, "wait": 0}}},
		Nets:   []Device{{Name: "default", Network: "default", Values: map[string]float64{"rx.bytes": 1500, "tx.bytes": 900, "rx.errs": 0}}},
		Blocks: []Device{{Name: "root", Values: map[string]float64{"rd.reqs": 10, "rd.bytes": 40960, "rd.times": 5e8}}},
	}
}

func instance(name string, stats func() (DomainStats, error)) Instance {
	return Instance{Namespace: "ns", Name: name, Stats: stats}
}

func TestCollect(t *testing.T) {
	ok := func() (DomainStats, error) { return guest(), nil }
	broken := func() (DomainStats, error) { return DomainStats{}, errors.New("connection lost") }
	hang := func() (DomainStats, error) { time.Sleep(time.Minute); return guest(), nil }
	tests := []struct {
		name      string
		instances []Instance
		metrics   []string
		want      string
	}{
		{"no instances", nil, []string{"kubevirt_vmi_vcpu_seconds_total"}, ""},
		{"vcpu time with id and state", []Instance{instance("a", ok)}, []string{"kubevirt_vmi_vcpu_seconds_total", "kubevirt_vmi_vcpu_wait_seconds_total"}, `
# HELP kubevirt_vmi_vcpu_seconds_total Total amount of time spent in each state by each vcpu (cpu_time excluding hypervisor time). Where ` + "`id` is the vcpu identifier and `state` can be one of the following: [`OFFLINE`, `RUNNING`, `BLOCKED`]." + `
# TYPE kubevirt_vmi_vcpu_seconds_total counter
kubevirt_vmi_vcpu_seconds_total{id="0",name="a",namespace="ns",node="node1",state="running"} 2.5
# HELP kubevirt_vmi_vcpu_wait_seconds_total Amount of time spent by each vcpu while waiting on I/O.
# TYPE kubevirt_vmi_vcpu_wait_seconds_total counter
kubevirt_vmi_vcpu_wait_seconds_total{id="0",name="a",namespace="ns",node="node1"} 0
`},
		{"memory in bytes, only what libvirt reported", []Instance{instance("a", ok)}, []string{"kubevirt_vmi_memory_resident_bytes", "kubevirt_vmi_memory_domain_bytes", "kubevirt_vmi_memory_available_bytes"}, `
# HELP kubevirt_vmi_memory_domain_bytes The amount of memory in bytes allocated to the domain. The ` + "`memory`" + ` value in domain xml file.
# TYPE kubevirt_vmi_memory_domain_bytes gauge
kubevirt_vmi_memory_domain_bytes{name="a",namespace="ns",node="node1"} 1.34217728e+08
# HELP kubevirt_vmi_memory_resident_bytes Resident set size of the process running the domain.
# TYPE kubevirt_vmi_memory_resident_bytes gauge
kubevirt_vmi_memory_resident_bytes{name="a",namespace="ns",node="node1"} 2.097152e+06
`},
		{"network and storage by the instance's names", []Instance{instance("a", ok)}, []string{"kubevirt_vmi_network_receive_bytes_total", "kubevirt_vmi_storage_read_times_seconds_total"}, `
# HELP kubevirt_vmi_network_receive_bytes_total Total network traffic received in bytes.
# TYPE kubevirt_vmi_network_receive_bytes_total counter
kubevirt_vmi_network_receive_bytes_total{interface="default",name="a",namespace="ns",network="default",node="node1"} 1500
# HELP kubevirt_vmi_storage_read_times_seconds_total Total time spent on read operations.
# TYPE kubevirt_vmi_storage_read_times_seconds_total counter
kubevirt_vmi_storage_read_times_seconds_total{drive="root",name="a",namespace="ns",node="node1"} 0.5
`},
		{"a failing and a hung launcher cost only their own series", []Instance{instance("hung", hang), instance("a", ok), instance("broken", broken)},
			[]string{"kubevirt_vmi_cpu_usage_seconds_total"}, `
# HELP kubevirt_vmi_cpu_usage_seconds_total Total CPU time spent in all modes (sum of both vcpu and hypervisor usage).
# TYPE kubevirt_vmi_cpu_usage_seconds_total counter
kubevirt_vmi_cpu_usage_seconds_total{name="a",namespace="ns",node="node1"} 3
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Collector{Node: "node1", Instances: func() []Instance { return tt.instances }, InstanceTimeout: 200 * time.Millisecond}
			start := time.Now()
			if err := testutil.CollectAndCompare(c, strings.NewReader(strings.TrimPrefix(tt.want, "\n")), tt.metrics...); err != nil {
				t.Error(err)
			}
			// CollectAndCompare collects once; a hung launcher costs its timeout, no more.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("collecting took %s", d)
			}
		})
	}
}

// TestCollectBounds: many hung launchers cannot hold a scrape past its own timeout, and the
// instances not started by then are left out.
func TestCollectBounds(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := func() (DomainStats, error) { <-release; return guest(), nil }
	var instances []Instance
	for range 10 {
		instances = append(instances, instance("hung", hang))
	}
	instances = append(instances, instance("late", func() (DomainStats, error) { return guest(), nil }))
	c := &Collector{Node: "node1", Instances: func() []Instance { return instances },
		InstanceTimeout: 100 * time.Millisecond, ScrapeTimeout: 250 * time.Millisecond, Parallel: 2}
	start := time.Now()
	n := testutil.CollectAndCount(c)
	if d := time.Since(start); d > time.Second {
		t.Errorf("collecting took %s, want about the scrape timeout", d)
	}
	if n != 0 {
		t.Errorf("%d series, want none: the late instance starts after the scrape's time is up", n)
	}
}

// TestDescribe: the registry accepts the collector as checked, and every series matches
// a description it gave.
func TestDescribe(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := &Collector{Node: "node1", Instances: func() []Instance {
		return []Instance{instance("a", func() (DomainStats, error) { return guest(), nil })}
	}}
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) < 10 {
		t.Errorf("%d metric families, want every group's", len(families))
	}
}
