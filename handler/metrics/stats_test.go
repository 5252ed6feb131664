package metrics

import (
	"testing"

	"github.com/digitalocean/go-libvirt"
	"github.com/google/go-cmp/cmp"
)

func param(field string, v any) libvirt.TypedParam {
	return libvirt.TypedParam{Field: field, Value: libvirt.TypedParamValue{I: v}}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		params []libvirt.TypedParam
		want   DomainStats
	}{
		{"nothing", nil, DomainStats{Domain: map[string]float64{}, VCPUs: []Device{}, Nets: []Device{}, Blocks: []Device{}}},
		{"domain-wide fields of every numeric type", []libvirt.TypedParam{
			param("state.state", int32(1)), param("cpu.time", uint64(5e9)), param("balloon.rss", uint64(120000)),
			param("balloon.maximum", uint32(98304)), param("vcpu.current", uint32(2)), param("net.count", uint32(1)),
			param("cpu.haltpoll.ratio", float64(0.5)), param("balloon.last-update", int64(-1)),
		}, DomainStats{Domain: map[string]float64{
			"state.state": 1, "cpu.time": 5e9, "balloon.rss": 120000, "balloon.maximum": 98304, "vcpu.current": 2,
			"net.count": 1, "cpu.haltpoll.ratio": 0.5, "balloon.last-update": -1,
		}, VCPUs: []Device{}, Nets: []Device{}, Blocks: []Device{}}},
		{"numbered groups in libvirt's order, named", []libvirt.TypedParam{
			param("vcpu.1.state", int32(2)), param("vcpu.1.time", uint64(7)), param("vcpu.0.state", int32(1)), param("vcpu.0.time", uint64(9)),
			param("net.0.name", "tap0"), param("net.0.rx.bytes", uint64(100)), param("net.0.tx.pkts", uint64(3)),
			param("block.0.name", "vda"), param("block.0.path", "/disk.qcow2"), param("block.0.rd.reqs", uint64(4)),
			param("block.1.name", "vdb"), param("block.1.wr.times", uint64(8)),
		}, DomainStats{Domain: map[string]float64{},
			VCPUs:  []Device{{Name: "0", Values: map[string]float64{"state": 1, "time": 9}}, {Name: "1", Values: map[string]float64{"state": 2, "time": 7}}},
			Nets:   []Device{{Name: "tap0", Values: map[string]float64{"rx.bytes": 100, "tx.pkts": 3}}},
			Blocks: []Device{{Name: "vda", Values: map[string]float64{"rd.reqs": 4}}, {Name: "vdb", Values: map[string]float64{"wr.times": 8}}},
		}},
		{"odd fields are kept domain-wide or dropped", []libvirt.TypedParam{
			param("vcpu.-1.time", uint64(1)), param("net.x.rx.bytes", uint64(2)), param("perf.cmt", uint64(3)),
			param("block.0.name", int32(5)), param("state.reason", "a string"),
		}, DomainStats{Domain: map[string]float64{"vcpu.-1.time": 1, "net.x.rx.bytes": 2, "perf.cmt": 3},
			VCPUs: []Device{}, Nets: []Device{}, Blocks: []Device{{Name: "0", Values: map[string]float64{}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Parse(tt.params)); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}
