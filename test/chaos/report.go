//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one fault's line of the report. recovery counts from the fault (for the paused API
// server: from its SIGCONT; for the lost node: from the kill) until the whole workload ran
// again; back, for the lost node, from starting it again until it was used again.
type row struct {
	fault, recovery, back, checks, notes string
}

func formatReport(rows []row, short bool) string {
	var b strings.Builder
	mode := "full"
	if short {
		mode = "short (CHAOS_SHORT=1)"
	}
	fmt.Fprintf(&b, "make chaos, %s, %s\n", mode, time.Now().UTC().Format(time.RFC3339))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "fault\trecovery\tnode back\tchecks")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.fault, r.recovery, r.back, r.checks)
	}
	_ = w.Flush()
	b.WriteString("\n")
	for _, r := range rows {
		if r.notes != "" {
			fmt.Fprintf(&b, "%s: %s\n", r.fault, r.notes)
		}
	}
	return b.String()
}

// writeReport writes the report to _out/chaos/report.txt, for CI to keep.
func writeReport(root, report string) (string, error) {
	dir := filepath.Join(root, "_out", "chaos")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.txt")
	return path, os.WriteFile(path, []byte(report), 0o644)
}

// checksSummary is the checks column: ok, or how many failed and the first.
func checksSummary(failures []string) string {
	if len(failures) == 0 {
		return "ok"
	}
	first := failures[0]
	if len(first) > 60 {
		first = first[:60] + "..."
	}
	return fmt.Sprintf("FAILED (%d): %s", len(failures), strings.ReplaceAll(first, "\n", " "))
}
