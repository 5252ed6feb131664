package handler

import (
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
	"github.com/prometheus/client_golang/prometheus/testutil"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// runningDomainXML is the live domain of newInstance: its disk and its masquerade tap.
const runningDomainXML = `<domain type="qemu"><name>ns_web</name><devices>
<disk type="file" device="disk"><target dev="vda" bus="virtio"/></disk>
<interface type="ethernet"><mac address="52:54:00:aa:bb:cc"/><target dev="tap0" managed="no"/></interface>
</devices></domain>`

func typed(field string, v any) libvirt.TypedParam {
	return libvirt.TypedParam{Field: field, Value: libvirt.TypedParamValue{I: v}}
}

// TestMetricInstances: the node's running instances the handler is connected to are scraped,
// with the spec's names on their devices; others are left out, and a scrape never dials.
func TestMetricInstances(t *testing.T) {
	stats := []libvirt.TypedParam{
		typed("vcpu.0.state", int32(1)), typed("vcpu.0.time", uint64(2e9)),
		typed("net.0.name", "tap0"), typed("net.0.rx.bytes", uint64(1500)),
		typed("block.0.name", "vda"), typed("block.0.rd.bytes", uint64(4096)),
	}
	const want = `
# HELP kubevirt_vmi_network_receive_bytes_total Total network traffic received in bytes.
# TYPE kubevirt_vmi_network_receive_bytes_total counter
kubevirt_vmi_network_receive_bytes_total{interface="default",name="web",namespace="ns",network="default",node="node-a"} 1500
# HELP kubevirt_vmi_storage_read_traffic_bytes_total Total number of bytes read from storage.
# TYPE kubevirt_vmi_storage_read_traffic_bytes_total counter
kubevirt_vmi_storage_read_traffic_bytes_total{drive="root",name="web",namespace="ns",node="node-a"} 4096
`
	tests := []struct {
		name   string
		change func(f *fixture)
		want   string
	}{
		{"running and connected", func(*fixture) {}, want},
		{"launcher gated after faults", func(f *fixture) { f.c.gate.trip("ns/web") }, ""},
		{"not connected: no dial", func(f *fixture) { f.c.conns.forget("ns/web", "") }, ""},
		{"on another node", func(f *fixture) {
			vmi := newInstance()
			vmi.Status.Phase, vmi.Status.NodeName = v1.Running, "node-b"
			_ = f.vmis.Update(vmi)
		}, ""},
		{"no longer running", func(f *fixture) {
			vmi := newInstance()
			vmi.Status.Phase = v1.Succeeded
			_ = f.vmis.Update(vmi)
		}, ""},
		{"domain gone from libvirt", func(f *fixture) { f.lv.set(domName, libvirt.DomainShutoff, 0) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase = v1.Running
			f := newFixture(t, vmi, newPod(vmi))
			f.lv.domains[domName] = &fakeDomain{xml: runningDomainXML, status: DomainStatus{State: libvirt.DomainRunning, Reason: 1}}
			f.lv.stats = stats
			f.sync()
			dials := f.dials
			tt.change(f)
			names := []string{"kubevirt_vmi_network_receive_bytes_total", "kubevirt_vmi_storage_read_traffic_bytes_total"}
			if err := testutil.CollectAndCompare(f.c.Metrics(), strings.NewReader(strings.TrimPrefix(tt.want, "\n")), names...); err != nil {
				t.Error(err)
			}
			if f.dials != dials {
				t.Errorf("the scrape dialled the launcher")
			}
		})
	}
}
