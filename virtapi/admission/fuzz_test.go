package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// FuzzAdmission feeds arbitrary JSON to validation and defaulting of every kind, as create
// and update (against a valid stored object, and as its own stored object): whatever a
// client sends, the webhook answers and never panics.
func FuzzAdmission(f *testing.F) {
	for _, seed := range []string{vmJSON, vmiJSON, rsJSON, `{}`, `null`, `{"spec":{"template":{"spec":{"volumes":[{}]}}}}`,
		`{"spec":{"domain":{"cpu":{"cores":4294967295,"sockets":4294967295,"threads":-1}},"volumes":[{"name":"e","emptyDisk":{"capacity":"64Ti"}}]}}`,
		`{"spec":{"hostname":"a\u0000b","domain":{"firmware":{"uuid":"x\n","kernelBoot":{"kernelArgs":"\u007f"}}}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, res := range []string{VirtualMachines, VirtualMachineInstances, ReplicaSets} {
			for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
				for _, old := range [][]byte{nil, []byte(vmiJSON), raw} {
					req := review(res, op, raw)
					req.OldObject = runtimeRaw(old)
					if r := Validate(req, DefaultLimits()); r == nil || (!r.Allowed && r.Result == nil) {
						t.Fatalf("validate %s %s: bad response %+v", op, res, r)
					}
					if r := Mutate(req); r == nil || (!r.Allowed && r.Result == nil) {
						t.Fatalf("mutate %s %s: bad response %+v", op, res, r)
					}
				}
			}
		}
	})
}
