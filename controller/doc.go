// Package controller holds virt-controller's controllers: VirtualMachine, VirtualMachineInstance
// and VirtualMachineInstanceReplicaSet, each shaped like Kubernetes' ReplicaSet controller
// (listers, a rate-limited workqueue, expectations, one sync per key). Issue 4 fills it.
package controller
