// Command virt-controller runs the VirtualMachine, VirtualMachineInstance and VirtualMachineInstanceReplicaSet controllers.
//
// Until issue 4 lands it only serves /healthz and /readyz, so that it deploys and its pod
// becomes Ready; it does no other work.
package main

import (
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/health"
)

func main() {
	healthAddr := pflag.String("health-addr", ":8080", "address of the /healthz and /readyz endpoints")
	component.ParseFlags()
	klog.InfoS("starting; health endpoints only until issue 4", "component", "virt-controller")
	component.Exit(health.Serve(component.SignalContext(), *healthAddr, health.Always))
}
