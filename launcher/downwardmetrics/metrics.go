package downwardmetrics

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"time"
)

// Document is vhostmd's metrics document.
type Document struct {
	XMLName xml.Name `xml:"metrics"`
	Metrics []Metric `xml:"metric"`
}

// Metric is one named value, about the host (the node) or the vm (this guest).
type Metric struct {
	Type    string `xml:"type,attr"`
	Context string `xml:"context,attr"`
	Unit    string `xml:"unit,attr,omitempty"`
	Name    string `xml:"name"`
	Value   string `xml:"value"`
}

const (
	contextHost = "host"
	contextVM   = "vm"
)

func text(context, name, value string) Metric {
	return Metric{Type: "string", Context: context, Name: name, Value: value}
}

func unsigned(context, name, unit string, value uint64) Metric {
	return Metric{Type: "uint64", Context: context, Unit: unit, Name: name, Value: strconv.FormatUint(value, 10)}
}

func seconds(context, name string, d time.Duration) Metric {
	return Metric{Type: "real64", Context: context, Unit: "s", Name: name, Value: strconv.FormatFloat(d.Seconds(), 'f', 6, 64)}
}

// VMStats are the guest's own figures, from libvirt.
type VMStats struct {
	// CPUTime is the time its virtual CPUs ran.
	CPUTime time.Duration
	VCPUs   uint64
	// MemoryKiB is the memory the guest has (its balloon's size: the whole of it here, as
	// nothing inflates the balloon).
	MemoryKiB uint64
	// Hypervisor is QEMU's version.
	Hypervisor string
}

// vmMetrics are KubeVirt's figures of the guest itself.
func vmMetrics(s VMStats) []Metric {
	return []Metric{
		seconds(contextVM, "TotalCPUTime", s.CPUTime),
		unsigned(contextVM, "ResourceProcessorLimit", "", s.VCPUs),
		unsigned(contextVM, "PhysicalMemoryAllocatedToVirtualSystem", "KiB", s.MemoryKiB),
		unsigned(contextVM, "ResourceMemoryLimit", "KiB", s.MemoryKiB),
	}
}

// Report builds the document: the static facts, the guest's figures and the node's. A
// figure that cannot be read is left out rather than reported as zero.
func Report(node string, vm VMStats, host []Metric) Document {
	doc := Document{Metrics: []Metric{
		text(contextHost, "HostName", node),
		text(contextHost, "HostSystemInfo", "linux"),
		// KubeVirt's value: guest tools written for KubeVirt look for it.
		text(contextHost, "VirtualizationVendor", "kubevirt.io"),
		text(contextHost, "VirtProductInfo", vm.Hypervisor),
	}}
	doc.Metrics = append(doc.Metrics, vmMetrics(vm)...)
	doc.Metrics = append(doc.Metrics, host...)
	return doc
}

// Marshal is the document as vhostmd writes it, with the final newline vm-dump-metrics
// leaves out.
func (d Document) Marshal() []byte {
	out, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		// Only strings and fixed types: encoding cannot fail.
		panic(fmt.Sprintf("encode metrics: %v", err))
	}
	return append(out, '\n')
}
