package main

import (
	"strings"
	"testing"
)

// TestReportColumns: a scenario left out (its count 0) has no columns, and each scenario is
// compared with its own floor.
func TestReportColumns(t *testing.T) {
	floor, direct, floorDeployment, vmctl := &result{Count: 1}, &result{Count: 2}, &result{Count: 3}, &result{Count: 4}
	for _, tc := range []struct {
		name   string
		report report
		want   []string
	}{
		{"both", report{Floor: floor, Direct: direct, FloorDeployment: floorDeployment, Vmctl: vmctl},
			[]string{"floor: launcher pods booting QEMU directly", "(a) VMs", "floor: a Deployment of those pods", "(b) vmctl Deployment"}},
		{"(a) alone", report{Floor: floor, Direct: direct}, []string{"floor: launcher pods booting QEMU directly", "(a) VMs"}},
		{"(b) alone", report{FloorDeployment: floorDeployment, Vmctl: vmctl}, []string{"floor: a Deployment of those pods", "(b) vmctl Deployment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := tc.report.columns()
			var titles []string
			for _, c := range cols {
				titles = append(titles, c.title)
				if want := map[*result]*result{floor: floor, direct: floor, floorDeployment: floorDeployment, vmctl: floorDeployment}[c.r]; c.floor != want {
					t.Errorf("%s is compared with the floor of count %d", c.title, c.floor.Count)
				}
			}
			if strings.Join(titles, "|") != strings.Join(tc.want, "|") {
				t.Errorf("columns %q, want %q", titles, tc.want)
			}
			if md := tc.report.markdown(); !strings.Contains(md, tc.want[len(tc.want)-1]) {
				t.Errorf("markdown has no column %q:\n%s", tc.want[len(tc.want)-1], md)
			}
		})
	}
}
