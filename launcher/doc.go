// Package launcher is virt-launcher, the process inside each VirtualMachineInstance's pod that
// runs libvirtd and reports the domain's fate. Issue 5 fills it.
package launcher
