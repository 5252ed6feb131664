// Command fakelibvirtd replaces a launcher's libvirt socket with a hostile one (see package
// fakelibvirtd): fakelibvirtd <socket path> <mode>. The e2e suite copies it into a launcher pod.
package main

import (
	"fmt"
	"net"
	"os"

	"github.com/vmctl/vmctl/test/fakelibvirtd"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fakelibvirtd <socket path> <mode>")
		os.Exit(2)
	}
	path, mode := os.Args[1], os.Args[2]
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("serving", mode, "on", path)
	fmt.Fprintln(os.Stderr, fakelibvirtd.Serve(l, mode))
	os.Exit(1)
}
