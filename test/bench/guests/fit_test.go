package main

import "testing"

func TestFit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                            string
		want                            int
		allocatable, requested, perItem int64
		fits                            int
	}{
		{"all fit", 100, 24000 * mib, 500 * mib, 208 * mib, 100},
		{"launcher and vmctl pods: fewer", 100, 24000 * mib, 500 * mib, 240 * mib, 97},
		{"nothing left", 10, 1000 * mib, 1200 * mib, 208 * mib, 0},
		{"no request", 5, 1000 * mib, 0, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fit(tc.want, tc.allocatable, tc.requested, tc.perItem); got != tc.fits {
				t.Errorf("fit = %d, want %d", got, tc.fits)
			}
		})
	}
}
