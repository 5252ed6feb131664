package metrics

import (
	"sort"
	"strconv"
	"strings"

	"github.com/digitalocean/go-libvirt"
)

// DomainStats is what libvirt's domain statistics (virConnectGetAllDomainStats) say of one
// guest, in libvirt's units: nanoseconds, KiB for memory, bytes for traffic. A statistic
// libvirt did not report is absent, not zero: a guest without a balloon driver has no
// balloon.available, and KubeVirt then leaves the metric out.
type DomainStats struct {
	// Domain holds the domain-wide fields by their libvirt name (cpu.time, balloon.rss, ...).
	Domain map[string]float64
	// VCPUs, Nets and Blocks hold the numbered groups (vcpu.<n>.*, net.<n>.*, block.<n>.*),
	// in libvirt's order.
	VCPUs, Nets, Blocks []Device
}

// Device is one numbered group of statistics: a vCPU, an interface or a block device.
type Device struct {
	// Name is the vCPU's number, or the interface's or disk's libvirt name (net.<n>.name: the
	// tap device; block.<n>.name: the target, vda), until the caller puts the instance's
	// names in.
	Name string
	// Network is an interface's network in the instance's spec, set by the caller.
	Network string
	// Values holds the group's fields without their prefix (time, rx.bytes, rd.reqs, ...).
	Values map[string]float64
}

// Parse sorts libvirt's typed parameters into DomainStats. Numbers of every type become
// float64; strings are kept only where they name a device.
func Parse(params []libvirt.TypedParam) DomainStats {
	st := DomainStats{Domain: map[string]float64{}}
	groups := map[string]map[int]*Device{"vcpu": {}, "net": {}, "block": {}}
	for _, p := range params {
		group, rest, _ := strings.Cut(p.Field, ".")
		n, field, numbered := strings.Cut(rest, ".")
		index, err := strconv.Atoi(n)
		devices, known := groups[group]
		if !known || !numbered || err != nil || index < 0 {
			if v, ok := number(p.Value); ok {
				st.Domain[p.Field] = v
			}
			continue
		}
		d := devices[index]
		if d == nil {
			d = &Device{Name: n, Values: map[string]float64{}}
			devices[index] = d
		}
		if field == "name" {
			if s, ok := p.Value.I.(string); ok {
				d.Name = s
			}
			continue
		}
		if v, ok := number(p.Value); ok {
			d.Values[field] = v
		}
	}
	st.VCPUs, st.Nets, st.Blocks = ordered(groups["vcpu"]), ordered(groups["net"]), ordered(groups["block"])
	return st
}

// number is a typed parameter's numeric value (booleans as 0 or 1).
func number(v libvirt.TypedParamValue) (float64, bool) {
	switch x := v.I.(type) {
	case int32:
		return float64(x), true
	case uint32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func ordered(devices map[int]*Device) []Device {
	indexes := make([]int, 0, len(devices))
	for i := range devices {
		indexes = append(indexes, i)
	}
	sort.Ints(indexes)
	out := make([]Device, 0, len(indexes))
	for _, i := range indexes {
		out = append(out, *devices[i])
	}
	return out
}
