// Package handler is virt-handler, the node agent: it watches the VirtualMachineInstances
// scheduled to its node and drives each one's domain through the libvirt of its virt-launcher
// pod. Issue 5 fills it.
package handler
