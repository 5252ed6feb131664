package controller

import (
	"testing"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// firmwareUUID is the UUID in a VM's template, "" when none is set.
func firmwareUUID(vm *v1.VirtualMachine) types.UID {
	if fw := vm.Spec.Template.Spec.Domain.Firmware; fw != nil {
		return fw.UUID
	}
	return ""
}

// vmiFirmwareUUID is the UUID an instance carries, "" when none is set.
func vmiFirmwareUUID(vmi *v1.VirtualMachineInstance) types.UID {
	if fw := vmi.Spec.Domain.Firmware; fw != nil {
		return fw.UUID
	}
	return ""
}

// TestFirmwareUUIDStableAcrossRestarts: a VM created without a firmware UUID gets a random
// one persisted into its template at first start; every instance carries it, through
// restarts of either kind, while each restart is a new instance.
func TestFirmwareUUIDStableAcrossRestarts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := createVM(t, ns, "stable", v1.RunStrategyAlways)
	if got := firmwareUUID(vm); got != "" {
		t.Fatalf("created VM already has firmware UUID %q; the test needs none", got)
	}
	vmi := waitRunning(t, vm)
	persisted := firmwareUUID(getVM(t, ns, vm.Name))
	if _, err := uuid.Parse(string(persisted)); err != nil {
		t.Fatalf("firmware UUID persisted in the VM's template: %q (%v)", persisted, err)
	}
	if got := vmiFirmwareUUID(vmi); got != persisted {
		t.Fatalf("instance firmware UUID %q, want the VM's %q", got, persisted)
	}

	restarts := []struct {
		name string
		do   func(vmi *v1.VirtualMachineInstance)
	}{
		{"restart request", func(vmi *v1.VirtualMachineInstance) {
			requestStateChange(t, ns, vm.Name, stopRequest(vmi.UID), startRequest)
		}},
		{"instance deleted", func(vmi *v1.VirtualMachineInstance) { deleteVMI(t, vmi) }},
		{"restart request", func(vmi *v1.VirtualMachineInstance) {
			requestStateChange(t, ns, vm.Name, stopRequest(vmi.UID), startRequest)
		}},
	}
	seen := map[types.UID]bool{vmi.UID: true}
	for i, restart := range restarts {
		restart.do(vmi)
		vmi = waitRunningNot(t, vm, vmi.UID)
		if seen[vmi.UID] {
			t.Fatalf("restart %d (%s): instance %s ran before", i+1, restart.name, vmi.UID)
		}
		seen[vmi.UID] = true
		if got := vmiFirmwareUUID(vmi); got != persisted {
			t.Errorf("restart %d (%s): instance firmware UUID %q, want %q", i+1, restart.name, got, persisted)
		}
		if got := firmwareUUID(getVM(t, ns, vm.Name)); got != persisted {
			t.Errorf("restart %d (%s): VM firmware UUID changed to %q, want %q", i+1, restart.name, got, persisted)
		}
	}
}

// TestFirmwareUUIDUnique: two VMs of the same name in two namespaces get different UUIDs
// (KubeVirt once derived them from the name alone), a UUID the user set is kept as is, and a
// firmware section without a UUID gets one added, the rest kept.
func TestFirmwareUUIDUnique(t *testing.T) {
	t.Parallel()
	first, second := newNamespace(t), newNamespace(t)
	a := createVM(t, first, "twin", v1.RunStrategyAlways)
	b := createVM(t, second, "twin", v1.RunStrategyAlways)
	given := newVM(first, "given")
	given.Spec.RunStrategy = a.Spec.RunStrategy
	given.Spec.Template.Spec.Domain.Firmware = &v1.Firmware{UUID: "5e3a4c4e-1c1f-4c4b-9a51-2a2f8e0d7b11"}
	given = createVMObject(t, given)
	serial := newVM(first, "serial") // firmware present, UUID empty
	serial.Spec.RunStrategy = a.Spec.RunStrategy
	serial.Spec.Template.Spec.Domain.Firmware = &v1.Firmware{Serial: "sn-1234"}
	serial = createVMObject(t, serial)

	uuids := map[string]types.UID{}
	for _, vm := range []*v1.VirtualMachine{a, b, given, serial} {
		vmi := waitRunning(t, vm)
		persisted := firmwareUUID(getVM(t, vm.Namespace, vm.Name))
		if persisted == "" || vmiFirmwareUUID(vmi) != persisted {
			t.Errorf("%s/%s: VM firmware UUID %q, instance %q; want equal and set", vm.Namespace, vm.Name, persisted, vmiFirmwareUUID(vmi))
		}
		uuids[vm.Namespace+"/"+vm.Name] = persisted
	}
	if uuids[first+"/twin"] == uuids[second+"/twin"] {
		t.Errorf("same-named VMs in %s and %s share firmware UUID %s", first, second, uuids[first+"/twin"])
	}
	if got, want := uuids[first+"/given"], firmwareUUID(given); got != want {
		t.Errorf("user-given firmware UUID replaced: %q, want %q", got, want)
	}
	if fw := getVM(t, first, serial.Name).Spec.Template.Spec.Domain.Firmware; fw.Serial != "sn-1234" {
		t.Errorf("firmware serial %q after the UUID was added, want sn-1234 kept", fw.Serial)
	}
	if len(uuids) != 4 || uuids[first+"/serial"] == uuids[first+"/twin"] || uuids[first+"/serial"] == uuids[second+"/twin"] {
		t.Errorf("firmware UUIDs not distinct: %v", uuids)
	}
}
