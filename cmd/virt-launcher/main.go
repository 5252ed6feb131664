// Command virt-launcher runs inside each VirtualMachineInstance's pod and hosts its libvirt and QEMU.
//
// Until issue 5 lands it only serves /healthz and /readyz, so that it deploys and its pod
// becomes Ready; it does no other work.
package main

import "github.com/vmctl/vmctl/pkg/component"

func main() { component.ServeHealthOnly("virt-launcher", 5) }
