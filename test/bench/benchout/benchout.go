// Package benchout is what the benchmarks share: a clean slate between workloads, and how they
// leave their results (raw numbers as <name>.json and the table as <name>.md in one directory,
// the table also on stdout).
package benchout

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes result as dir/name.json and table as dir/name.md, and prints the table.
func Write(dir, name string, result any, table string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Print(table)
	return os.WriteFile(filepath.Join(dir, name+".md"), []byte(table), 0o644)
}
