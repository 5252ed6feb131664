package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// fresh dials each request: the guest's httpd closes every connection, and a kept one that
// went to the source pod would hang once it left.
var fresh = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// answers says whether url answers 200 within timeout.
func answers(ctx context.Context, url string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := fresh.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// longestPause polls url every 20 ms until stop closes (at most ten minutes) and returns the
// longest time between two answers.
func longestPause(ctx context.Context, url string, stop <-chan struct{}) time.Duration {
	var longest time.Duration
	last := time.Now()
	deadline := time.After(10 * time.Minute)
	for {
		select {
		case <-stop:
			return longest
		case <-deadline:
			return longest
		case <-time.After(20 * time.Millisecond):
		}
		if answers(ctx, url, 500*time.Millisecond) {
			longest = max(longest, time.Since(last))
			last = time.Now()
		}
	}
}

// table is the result as markdown: median and max of each measure over the runs.
func table(runs []run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| live migration of the test guest (%s of memory, kernel boot, TCG) between the two real nodes; %d runs, one at a time | median | max |\n| --- | --- | --- |\n", memory, len(runs))
	row := func(what, unit string, scale float64, get func(run) float64) {
		values := make([]float64, len(runs))
		for i, r := range runs {
			values[i] = get(r) * scale
		}
		slices.Sort(values)
		digits := 2
		if unit == "ms" {
			digits = 0
		}
		fmt.Fprintf(&b, "| %s | %.*f %s | %.*f %s |\n", what, digits, values[len(values)/2], unit, digits, values[len(values)-1], unit)
	}
	row("create migration -> Succeeded (what virtctl migrate waits)", "s", 1, func(r run) float64 { return r.EndToEnd })
	row("libvirt's migration time (the floor: QEMU copying the memory)", "s", 1, func(r run) float64 { return r.LibvirtElapsed })
	row("downtime: the guest paused for the switch (libvirt)", "ms", 1000, func(r run) float64 { return r.LibvirtDowntime })
	row("longest pause seen by a client polling the guest's Service every 20 ms", "ms", 1000, func(r run) float64 { return r.ClientPause })
	row("data sent", "MiB", 1, func(r run) float64 { return r.MiBSent })
	if missing := len(slices.DeleteFunc(slices.Clone(runs), func(r run) bool { return !r.NoLibvirtAccount })); missing > 0 {
		fmt.Fprintf(&b, "\nlibvirt's account (MigrationReceived event) missing for %d of %d runs: counted as 0 above.\n", missing, len(runs))
	}
	return b.String()
}
