// Command virtctl controls virtual machines: see package virtctl.
package main

import (
	"fmt"
	"os"

	"github.com/vmctl/vmctl/virtctl"
)

func main() {
	if err := virtctl.NewRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "virtctl:", err)
		os.Exit(1)
	}
}
