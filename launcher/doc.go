// Package launcher is virt-launcher, the process inside each VirtualMachineInstance's pod
// (container "compute"): it plumbs the pod's network for the guest, runs the pod's own
// libvirtd and follows the one domain virt-handler defines there, until the domain is gone or
// the pod is deleted, and reports the domain's fate as its exit status. docs/node.md is the
// contract with the pod rendering (controller/vmi) and the handler.
//
// Files: launcher.go (the sequence), reaper.go (child subreaper), libvirtd.go (the daemon),
// hypervisor.go (go-libvirt), domain.go (what a lifecycle event means for the exit status),
// watch.go (events, SIGTERM, grace period), console.go (console.log to stdout). Subpackages:
// network (masquerade: tap, bridge, NAT, DHCP) and diskcopy (the init containers' copies).
package launcher
