package main

import (
	"testing"
	"time"
)

func TestStalled(t *testing.T) {
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	const stall = 10 * time.Minute
	for _, tc := range []struct {
		name                string
		quietFor, noMarkers time.Duration
		want                bool
	}{
		{"printing, a marker lately", time.Second, time.Minute, false},
		{"slow guests still printing their boot, no marker for 20 minutes", 15 * time.Second, 20 * time.Minute, false},
		{"consoles quiet for longer than stall", 11 * time.Minute, 11 * time.Minute, true},
		{"printing, but no marker for three times stall", time.Second, 31 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stalled(now, now.Add(-tc.quietFor), now.Add(-tc.noMarkers), stall); got != tc.want {
				t.Errorf("stalled = %v, want %v", got, tc.want)
			}
		})
	}
}
