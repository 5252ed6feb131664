package admission

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// storedVMI is vmiJSON as the apiserver stores it: defaulted by the mutating webhook, with a
// quantity and an empty map spelled as a user may have written them.
func storedVMI(t *testing.T) []byte {
	t.Helper()
	vmi := &v1.VirtualMachineInstance{}
	created := edit(t, vmiJSON, func(m map[string]any) {
		s := at(m, "spec").(map[string]any)
		s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": "scratch", "emptyDisk": map[string]any{"capacity": "1024Mi"}})
	})
	mutated(t, VirtualMachineInstances, admissionv1.Create, created, vmi)
	raw, err := json.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	return edit(t, string(raw), func(m map[string]any) {
		at(m, "spec").(map[string]any)["nodeSelector"] = map[string]any{}
	})
}

func updateReview(resource string, old, cur []byte) *admissionv1.AdmissionRequest {
	req := review(resource, admissionv1.Update, cur)
	req.OldObject = runtimeRaw(old)
	return req
}

func TestVMISpecIsImmutable(t *testing.T) {
	old := storedVMI(t)
	const why = "update of VMI object is restricted: an instance's spec is fixed once it is created"
	for _, tc := range []struct {
		name, field string
		edit        func(m map[string]any)
	}{
		{name: "metadata stays editable", edit: func(m map[string]any) {
			meta := at(m, "metadata").(map[string]any)
			meta["labels"] = map[string]any{"a": "b"}
			meta["annotations"] = map[string]any{"c": "d"}
			meta["finalizers"] = []any{"example.com/f"}
			meta["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "1"}}
		}},
		{name: "status is not the webhook's business", edit: func(m map[string]any) { m["status"] = map[string]any{"phase": "Running"} }},
		{name: "the same spec in Go's spelling (1Gi, no empty map)", edit: func(m map[string]any) {
			s := at(m, "spec").(map[string]any)
			at(s, "volumes", 1, "emptyDisk").(map[string]any)["capacity"] = "1Gi"
			delete(s, "nodeSelector")
		}},
		{name: "hostname", field: "spec.hostname", edit: func(m map[string]any) { at(m, "spec").(map[string]any)["hostname"] = "other" }},
		{name: "memory", field: "spec.domain", edit: func(m map[string]any) {
			at(m, "spec", "domain", "resources", "requests").(map[string]any)["memory"] = "128Mi"
		}},
		{name: "a larger emptyDisk", field: "spec.volumes", edit: func(m map[string]any) {
			at(m, "spec", "volumes", 1, "emptyDisk").(map[string]any)["capacity"] = "2Gi"
		}},
		{name: "a node selector", field: "spec.nodeSelector", edit: func(m map[string]any) {
			at(m, "spec").(map[string]any)["nodeSelector"] = map[string]any{"k": "v"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := validate(updateReview(VirtualMachineInstances, old, edit(t, string(old), tc.edit)))
			checkResponse(t, resp, tc.field, why)
		})
	}
	// Both members named when both changed.
	resp := validate(updateReview(VirtualMachineInstances, old, edit(t, string(old), func(m map[string]any) {
		s := at(m, "spec").(map[string]any)
		s["hostname"], s["terminationGracePeriodSeconds"] = "other", 5
	})))
	checkResponse(t, resp, "spec.terminationGracePeriodSeconds", why)
	checkResponse(t, resp, "spec.hostname", why)
}

// TestVMIUpdateIsNotDefaulted: an update whose spec means the stored one gets no patch, even
// when the stored spec lacks a default (created before the default existed): the patch
// would make the spec differ and the update be refused. An update that drops defaults (a
// `kubectl replace` of the original manifest) gets them back, and is admitted.
func TestVMIUpdateIsNotDefaulted(t *testing.T) {
	undefaulted := []byte(vmiJSON)
	if r := Mutate(updateReview(VirtualMachineInstances, undefaulted, edit(t, vmiJSON, func(m map[string]any) {
		at(m, "metadata").(map[string]any)["labels"] = map[string]any{"a": "b"}
	}))); !r.Allowed || r.Patch != nil {
		t.Fatalf("an update of an undefaulted instance was patched: %s", r.Patch)
	}

	// The original manifest, sent whole again: the stored emptyDisk as written, no defaults.
	stored := storedVMI(t)
	original := edit(t, vmiJSON, func(m map[string]any) {
		s := at(m, "spec").(map[string]any)
		s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": "scratch", "emptyDisk": map[string]any{"capacity": "1024Mi"}})
	})
	resp := Mutate(updateReview(VirtualMachineInstances, stored, original))
	if !resp.Allowed || resp.Patch == nil {
		t.Fatalf("the replace was not defaulted: %+v", resp)
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatal(err)
	}
	replaced, err := p.Apply(original)
	if err != nil {
		t.Fatal(err)
	}
	checkResponse(t, validate(updateReview(VirtualMachineInstances, stored, replaced)), "", "")
	// Without the defaults it would have been a change.
	checkResponse(t, validate(updateReview(VirtualMachineInstances, stored, original)), "spec.domain", VMIUpdateRestricted)
}

func TestTypeErrorsNameTheField(t *testing.T) {
	raw := edit(t, vmiJSON, func(m map[string]any) { at(m, "spec", "domain").(map[string]any)["cpu"] = map[string]any{"cores": -1} })
	for _, resp := range []*admissionv1.AdmissionResponse{
		validate(review(VirtualMachineInstances, admissionv1.Create, raw)),
		Mutate(review(VirtualMachineInstances, admissionv1.Create, raw)),
	} {
		checkResponse(t, resp, "spec.domain.cpu.cores", "must be an integer from 0 to 4294967295")
	}
}
