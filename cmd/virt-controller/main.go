// Command virt-controller runs the VirtualMachine, VirtualMachineInstance and VirtualMachineInstanceReplicaSet controllers.
//
// Until issue 4 lands it only serves /healthz and /readyz, so that it deploys and its pod
// becomes Ready; it does no other work.
package main

import "github.com/vmctl/vmctl/pkg/component"

func main() { component.ServeHealthOnly("virt-controller", 4) }
