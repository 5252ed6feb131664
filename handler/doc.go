// Package handler is virt-handler, the node agent: it watches the VirtualMachineInstances
// scheduled to its node and drives each one's domain through the libvirtd of its virt-launcher
// pod (docs/node.md, "virt-handler").
//
// Per instance key, one sync (sync.go): a Scheduled instance whose launcher pod runs here gets
// its cloud-init ISO and emptyDisk files written into the pod's private emptyDir (files.go,
// cloudinit.go), waits (requeued, not blocking) for the pod's libvirt socket, and has its domain
// converted (environment.go, handler/domain), defined and started, unless the domain exists:
// a restarted handler adopts running domains and never starts one twice (start.go). The
// instance's status follows the domain's state (status.go). One libvirt connection per launcher
// pod is kept, subscribed to the domain's lifecycle events, which enqueue the instance
// (launcher_conn.go); connections of pods that are gone are closed.
package handler
