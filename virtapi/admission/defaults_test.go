package admission

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func runtimeRaw(raw []byte) runtime.RawExtension { return runtime.RawExtension{Raw: raw} }

// mutated applies the mutating response's patch to raw, as the apiserver would.
func mutated(t *testing.T, resource string, op admissionv1.Operation, raw []byte, into any) *admissionv1.AdmissionResponse {
	t.Helper()
	resp := Mutate(review(resource, op, raw))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	if resp.Patch != nil {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatalf("patch %s: %v", resp.Patch, err)
		}
		if raw, err = p.Apply(raw); err != nil {
			t.Fatalf("apply %s: %v", resp.Patch, err)
		}
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestDefaultVM(t *testing.T) {
	NewUUID = func() types.UID { return "11111111-2222-4333-8444-555555555555" }
	raw := edit(t, vmJSON, func(m map[string]any) {
		at(tplSpec(m), "domain", "devices", "disks", 0).(map[string]any)["disk"] = map[string]any{}
	})
	var vm v1.VirtualMachine
	mutated(t, VirtualMachines, admissionv1.Create, raw, &vm)
	d := vm.Spec.Template.Spec.Domain
	switch {
	case d.Firmware == nil || d.Firmware.UUID != "11111111-2222-4333-8444-555555555555":
		t.Errorf("firmware UUID not set: %+v", d.Firmware)
	case d.Machine == nil || d.Machine.Type != "q35":
		t.Errorf("machine type not q35: %+v", d.Machine)
	case d.Devices.Disks[0].Disk == nil || d.Devices.Disks[0].Disk.Bus != v1.DiskBusSATA:
		t.Errorf("disk bus not sata: %+v", d.Devices.Disks[0])
	case vm.Spec.Template.Spec.Architecture != "amd64":
		t.Errorf("architecture not amd64: %q", vm.Spec.Template.Spec.Architecture)
	case vm.Spec.Template.Spec.TerminationGracePeriodSeconds == nil || len(vm.Spec.Template.Spec.Networks) != 1:
		t.Errorf("API defaults not applied: %+v", vm.Spec.Template.Spec)
	}

	// An update keeps the UUID it has and never invents one; a defaulted spec needs no patch.
	again, _ := json.Marshal(vm)
	if resp := Mutate(review(VirtualMachines, admissionv1.Update, again)); resp.Patch != nil {
		t.Errorf("defaulted VM patched again: %s", resp.Patch)
	}
	var updated v1.VirtualMachine
	mutated(t, VirtualMachines, admissionv1.Update, raw, &updated)
	if f := updated.Spec.Template.Spec.Domain.Firmware; f != nil && f.UUID != "" {
		t.Errorf("update invented a UUID: %s", f.UUID)
	}
}

func TestDefaultKeepsWhatIsSet(t *testing.T) {
	raw := edit(t, vmiJSON, func(m map[string]any) {
		d := at(m, "spec", "domain").(map[string]any)
		d["machine"] = map[string]any{"type": "pc"}
		d["firmware"] = map[string]any{"uuid": "keep"}
		at(d, "devices", "disks", 0).(map[string]any)["disk"] = map[string]any{"bus": "sata"}
	})
	var vmi v1.VirtualMachineInstance
	mutated(t, VirtualMachineInstances, admissionv1.Create, raw, &vmi)
	d := vmi.Spec.Domain
	if d.Machine.Type != "pc" || d.Firmware.UUID != "keep" || d.Devices.Disks[0].Disk.Bus != "sata" {
		t.Errorf("defaults overrode the user's choices: %+v %+v %+v", d.Machine, d.Firmware, d.Devices.Disks[0])
	}
}

func TestDefaultVMIRS(t *testing.T) {
	var rs v1.VirtualMachineInstanceReplicaSet
	mutated(t, ReplicaSets, admissionv1.Create, []byte(rsJSON), &rs)
	if m := rs.Spec.Template.Spec.Domain.Machine; m == nil || m.Type != "q35" {
		t.Errorf("machine type: %+v", m)
	}
}
