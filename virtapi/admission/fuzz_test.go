package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// FuzzAdmission feeds arbitrary JSON to validation and defaulting of every kind, as create
// and update: whatever a client sends, the webhook answers and never panics.
func FuzzAdmission(f *testing.F) {
	for _, seed := range []string{vmJSON, vmiJSON, rsJSON, `{}`, `null`, `{"spec":{"template":{"spec":{"volumes":[{}]}}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, res := range []string{VirtualMachines, VirtualMachineInstances, ReplicaSets} {
			for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
				req := review(res, op, raw)
				if r := Validate(req); r == nil || (!r.Allowed && r.Result == nil) {
					t.Fatalf("validate %s %s: bad response %+v", op, res, r)
				}
				if r := Mutate(req); r == nil || (!r.Allowed && r.Result == nil) {
					t.Fatalf("mutate %s %s: bad response %+v", op, res, r)
				}
			}
		}
	})
}
