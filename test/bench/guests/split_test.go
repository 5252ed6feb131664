package main

import (
	"testing"
	"time"
)

func TestPart(t *testing.T) {
	for _, tc := range []struct{ comm, cmdline, want string }{
		{"qemu-system-x86", "/usr/bin/qemu-system-x86_64 -name guest=x", partQEMU},
		{"libvirtd", "/usr/sbin/libvirtd --config /etc/libvirt/libvirtd.conf", partLibvirtd},
		{"virt-launcher", "/usr/bin/virt-launcher --name x", partLauncher},
		{"virt-launcher", "/usr/bin/virt-launcher guest-console-log", partConsole},
		{"tini", "/usr/bin/tini -s -- /usr/bin/virt-launcher", partInfra},
		{"pause", "/pause", partInfra},
	} {
		if got := part(tc.comm, tc.cmdline); got != tc.want {
			t.Errorf("part(%q, %q) = %q, want %q", tc.comm, tc.cmdline, got, tc.want)
		}
	}
}

func TestCPUAtInterpolates(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	s := &cpuSampler{series: map[string][]cpuPoint{"pod": {
		{at: t0, total: 1, parts: map[string]float64{partLibvirtd: 0.5}},
		{at: t0.Add(time.Second), total: 3, parts: map[string]float64{partLibvirtd: 0.5, partQEMU: 1}},
	}}}
	got, ok := s.at("pod", t0.Add(500*time.Millisecond))
	if !ok {
		t.Fatal("no CPU between two samples")
	}
	// Half way: total 2, libvirtd 0.5, QEMU (started in between) 0.5, the rest infrastructure.
	want := map[string]float64{partLibvirtd: 0.5, partQEMU: 0.5, partInfra: 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := s.at("pod", t0.Add(2*time.Second)); ok {
		t.Error("a time after the last sample has no CPU")
	}
}

func TestMarkerIn(t *testing.T) {
	log := "2026-11-27T02:43:12.000000001Z booting\n2026-11-27T02:43:14.820359406Z VMCTL-GUEST-READY hostname=vm1\n2026-11-27T02:43:15Z VMCTL-GUEST-READY again\n"
	got, err := markerIn([]byte(log))
	if want := time.Date(2026, 11, 27, 2, 43, 14, 820359406, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("markerIn = %v, %v; want %v", got, err, want)
	}
	if got, err := markerIn([]byte("2026-11-27T02:43:12Z booting\n")); err != nil || !got.IsZero() {
		t.Errorf("no marker: %v, %v", got, err)
	}
}
