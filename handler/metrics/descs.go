package metrics

import "github.com/prometheus/client_golang/prometheus"

// metric is one of KubeVirt's per-instance metrics and the libvirt field it comes from, with
// the factor from libvirt's unit to the metric's (nanoseconds to seconds, KiB to bytes).
type metric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	field string
	scale float64
}

const (
	nanoseconds = 1e-9
	kibibytes   = 1024
)

// Every series has KubeVirt's node, namespace and name labels, then its group's own.
var (
	instanceLabels = []string{"node", "namespace", "name"}
	vcpuLabels     = append(append([]string{}, instanceLabels...), "id")
	netLabels      = append(append([]string{}, instanceLabels...), "interface", "network")
	blockLabels    = append(append([]string{}, instanceLabels...), "drive")
)

func newMetric(name, help string, kind prometheus.ValueType, labels []string, field string, scale float64) metric {
	return metric{prometheus.NewDesc(name, help, labels, nil), kind, field, scale}
}

func counter(name, help string, labels []string, field string, scale float64) metric {
	return newMetric(name, help, prometheus.CounterValue, labels, field, scale)
}

func gauge(name, help string, labels []string, field string, scale float64) metric {
	return newMetric(name, help, prometheus.GaugeValue, labels, field, scale)
}

// The names and help texts are KubeVirt's (its docs/observability/metrics.md).
var (
	domainMetrics = []metric{
		counter("kubevirt_vmi_cpu_usage_seconds_total", "Total CPU time spent in all modes (sum of both vcpu and hypervisor usage).", instanceLabels, "cpu.time", nanoseconds),
		counter("kubevirt_vmi_cpu_user_usage_seconds_total", "Total CPU time spent in user mode.", instanceLabels, "cpu.user", nanoseconds),
		counter("kubevirt_vmi_cpu_system_usage_seconds_total", "Total CPU time spent in system mode.", instanceLabels, "cpu.system", nanoseconds),
		gauge("kubevirt_vmi_memory_resident_bytes", "Resident set size of the process running the domain.", instanceLabels, "balloon.rss", kibibytes),
		gauge("kubevirt_vmi_memory_domain_bytes", "The amount of memory in bytes allocated to the domain. The `memory` value in domain xml file.", instanceLabels, "balloon.maximum", kibibytes),
		gauge("kubevirt_vmi_memory_actual_balloon_bytes", "Current balloon size in bytes.", instanceLabels, "balloon.current", kibibytes),
		gauge("kubevirt_vmi_memory_available_bytes", "Amount of usable memory as seen by the domain. This value may not be accurate if a balloon driver is in use or if the guest OS does not initialize all assigned pages", instanceLabels, "balloon.available", kibibytes),
		gauge("kubevirt_vmi_memory_unused_bytes", "The amount of memory left completely unused by the system. Memory that is available but used for reclaimable caches should NOT be reported as free.", instanceLabels, "balloon.unused", kibibytes),
		gauge("kubevirt_vmi_memory_usable_bytes", "The amount of memory which can be reclaimed by balloon without pushing the guest system to swap, corresponds to 'Available' in /proc/meminfo.", instanceLabels, "balloon.usable", kibibytes),
		gauge("kubevirt_vmi_memory_cached_bytes", "The amount of memory that is being used to cache I/O and is available to be reclaimed, corresponds to the sum of `Buffers` + `Cached` + `SwapCached` in `/proc/meminfo`.", instanceLabels, "balloon.disk_caches", kibibytes),
		gauge("kubevirt_vmi_memory_swap_in_traffic_bytes", "The total amount of data read from swap space of the guest in bytes.", instanceLabels, "balloon.swap_in", kibibytes),
		gauge("kubevirt_vmi_memory_swap_out_traffic_bytes", "The total amount of memory written out to swap space of the guest in bytes.", instanceLabels, "balloon.swap_out", kibibytes),
		counter("kubevirt_vmi_memory_pgmajfault_total", "The number of page faults when disk IO was required. Page faults occur when a process makes a valid access to virtual memory that is not available. When servicing the page fault, if disk IO is required, it is considered as major fault.", instanceLabels, "balloon.major_fault", 1),
		counter("kubevirt_vmi_memory_pgminfault_total", "The number of other page faults, when disk IO was not required. Page faults occur when a process makes a valid access to virtual memory that is not available. When servicing the page fault, if disk IO is NOT required, it is considered as minor fault.", instanceLabels, "balloon.minor_fault", 1),
	}

	// vcpuSecondsDesc also has the vCPU's state label.
	vcpuSecondsDesc = prometheus.NewDesc("kubevirt_vmi_vcpu_seconds_total",
		"Total amount of time spent in each state by each vcpu (cpu_time excluding hypervisor time). Where `id` is the vcpu identifier and `state` can be one of the following: [`OFFLINE`, `RUNNING`, `BLOCKED`].",
		append(append([]string{}, vcpuLabels...), "state"), nil)
	vcpuMetrics = []metric{
		{vcpuSecondsDesc, prometheus.CounterValue, "time", nanoseconds},
		counter("kubevirt_vmi_vcpu_wait_seconds_total", "Amount of time spent by each vcpu while waiting on I/O.", vcpuLabels, "wait", nanoseconds),
		counter("kubevirt_vmi_vcpu_delay_seconds_total", "Amount of time spent by each vcpu waiting in the queue instead of running.", vcpuLabels, "delay", nanoseconds),
	}

	netMetrics = []metric{
		counter("kubevirt_vmi_network_receive_bytes_total", "Total network traffic received in bytes.", netLabels, "rx.bytes", 1),
		counter("kubevirt_vmi_network_transmit_bytes_total", "Total network traffic transmitted in bytes.", netLabels, "tx.bytes", 1),
		counter("kubevirt_vmi_network_receive_packets_total", "Total network traffic received packets.", netLabels, "rx.pkts", 1),
		counter("kubevirt_vmi_network_transmit_packets_total", "Total network traffic transmitted packets.", netLabels, "tx.pkts", 1),
		counter("kubevirt_vmi_network_receive_errors_total", "Total network received error packets.", netLabels, "rx.errs", 1),
		counter("kubevirt_vmi_network_transmit_errors_total", "Total network transmitted error packets.", netLabels, "tx.errs", 1),
		counter("kubevirt_vmi_network_receive_packets_dropped_total", "The total number of rx packets dropped on vNIC interfaces.", netLabels, "rx.drop", 1),
		counter("kubevirt_vmi_network_transmit_packets_dropped_total", "The total number of tx packets dropped on vNIC interfaces.", netLabels, "tx.drop", 1),
	}

	blockMetrics = []metric{
		counter("kubevirt_vmi_storage_iops_read_total", "Total number of I/O read operations.", blockLabels, "rd.reqs", 1),
		counter("kubevirt_vmi_storage_iops_write_total", "Total number of I/O write operations.", blockLabels, "wr.reqs", 1),
		counter("kubevirt_vmi_storage_read_traffic_bytes_total", "Total number of bytes read from storage.", blockLabels, "rd.bytes", 1),
		counter("kubevirt_vmi_storage_write_traffic_bytes_total", "Total number of written bytes.", blockLabels, "wr.bytes", 1),
		counter("kubevirt_vmi_storage_read_times_seconds_total", "Total time spent on read operations.", blockLabels, "rd.times", nanoseconds),
		counter("kubevirt_vmi_storage_write_times_seconds_total", "Total time spent on write operations.", blockLabels, "wr.times", nanoseconds),
		counter("kubevirt_vmi_storage_flush_requests_total", "Total storage flush requests.", blockLabels, "fl.reqs", 1),
		counter("kubevirt_vmi_storage_flush_times_seconds_total", "Total time spent on cache flushing.", blockLabels, "fl.times", nanoseconds),
	}

	allMetrics = concat(domainMetrics, vcpuMetrics, netMetrics, blockMetrics)
)

func concat(groups ...[]metric) []metric {
	var out []metric
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}
