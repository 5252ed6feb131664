// Command virt-handler is the node agent: it runs each VirtualMachineInstance's domain on its node through libvirt.
//
// Until issue 5 lands it only serves /healthz and /readyz, so that it deploys and its pod
// becomes Ready; it does no other work.
package main

import "github.com/vmctl/vmctl/pkg/component"

func main() { component.ServeHealthOnly("virt-handler", 5) }
