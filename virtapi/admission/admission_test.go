package admission

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// vmJSON is a valid VM; each case edits its JSON, as a user's manifest would differ.
const vmJSON = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm1"},
"spec":{"runStrategy":"Always","template":{"spec":{
 "domain":{"resources":{"requests":{"memory":"128Mi"}},"devices":{"disks":[{"name":"root","disk":{"bus":"virtio"}}]}},
 "volumes":[{"name":"root","containerDisk":{"image":"img"}}]}}}}`

func edit(t *testing.T, doc string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks a decoded JSON document along keys and list indexes.
func at(m map[string]any, keys ...any) any {
	var cur any = m
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur
}

func tplSpec(m map[string]any) map[string]any {
	return at(m, "spec", "template", "spec").(map[string]any)
}

// validate is Validate with virt-api's default limits.
func validate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return Validate(req, DefaultLimits())
}

func review(resource string, op admissionv1.Operation, raw []byte) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{UID: types.UID("u"), Operation: op, Name: "vm1",
		Resource: metav1.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: resource},
		Object:   runtimeRaw(raw)}
}

func TestValidateVM(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(m map[string]any)
		field   string // the field the rejection names; "" for allowed
		why     string // and part of its reason
		warning string
	}{
		{name: "valid", edit: func(map[string]any) {}},
		{name: "host disk", field: "spec.template.spec.volumes[0].hostDisk", why: "HostDisk feature gate", edit: func(m map[string]any) {
			tplSpec(m)["volumes"] = []any{map[string]any{"name": "root", "hostDisk": map[string]any{"path": "/"}}}
		}},
		{name: "disk without volume", field: "spec.template.spec.domain.devices.disks[0].name", why: `no volume named "other"`, edit: func(m map[string]any) {
			at(tplSpec(m), "domain", "devices", "disks", 0).(map[string]any)["name"] = "other"
		}},
		{name: "disk without volume on a halted VM is a warning", warning: `no volume named "other"`, edit: func(m map[string]any) {
			at(m, "spec").(map[string]any)["runStrategy"] = "Halted"
			at(tplSpec(m), "domain", "devices", "disks", 0).(map[string]any)["name"] = "other"
		}},
		{name: "duplicate disk", field: "spec.template.spec.domain.devices.disks[1].name", why: "Duplicate", edit: func(m map[string]any) {
			d := at(tplSpec(m), "domain", "devices").(map[string]any)
			d["disks"] = append(d["disks"].([]any), map[string]any{"name": "root"})
		}},
		{name: "memory too small", field: "spec.template.spec.domain.resources.requests.memory", why: "too small", edit: func(m map[string]any) {
			at(tplSpec(m), "domain", "resources", "requests").(map[string]any)["memory"] = "512Ki"
		}},
		{name: "guest above limit", field: "spec.template.spec.domain.memory.guest", why: "limits.memory", edit: func(m map[string]any) {
			d := at(tplSpec(m), "domain").(map[string]any)
			d["memory"] = map[string]any{"guest": "256Mi"}
			d["resources"].(map[string]any)["limits"] = map[string]any{"memory": "128Mi"}
		}},
		{name: "no memory", field: "spec.template.spec.domain.resources.requests.memory", why: "no memory", edit: func(m map[string]any) {
			delete(at(tplSpec(m), "domain").(map[string]any), "resources")
		}},
		{name: "name not a DNS label", field: "metadata.name", why: "dots", edit: func(m map[string]any) {
			at(m, "metadata").(map[string]any)["name"] = "vm.with.dots"
		}},
		{name: "name too long", field: "metadata.name", why: "63", edit: func(m map[string]any) {
			at(m, "metadata").(map[string]any)["name"] = strings.Repeat("a", 64)
		}},
		{name: "volume name makes an invalid container name", field: "spec.template.spec.volumes[0].name", why: "volume-", edit: func(m map[string]any) {
			long := strings.Repeat("r", 60)
			at(tplSpec(m), "domain", "devices", "disks", 0).(map[string]any)["name"] = long
			at(tplSpec(m), "volumes", 0).(map[string]any)["name"] = long
		}},
		{name: "bad hostname", field: "spec.template.spec.hostname", why: "RFC 1123", edit: func(m map[string]any) { tplSpec(m)["hostname"] = "Not_A_Host" }},
		{name: "running and runStrategy", field: "spec.running", why: "mutually exclusive", warning: "deprecated", edit: func(m map[string]any) {
			at(m, "spec").(map[string]any)["running"] = true
		}},
		{name: "running is deprecated", warning: "spec.running is deprecated", edit: func(m map[string]any) {
			s := at(m, "spec").(map[string]any)
			delete(s, "runStrategy")
			s["running"] = false
		}},
		{name: "no template", field: "spec.template", why: "Required", edit: func(m map[string]any) { delete(at(m, "spec").(map[string]any), "template") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := validate(review(VirtualMachines, admissionv1.Create, edit(t, vmJSON, tc.edit)))
			checkResponse(t, resp, tc.field, tc.why)
			if tc.warning != "" && !strings.Contains(strings.Join(resp.Warnings, "\n"), tc.warning) {
				t.Errorf("warnings %q, want one containing %q", resp.Warnings, tc.warning)
			}
		})
	}
}

func checkResponse(t *testing.T, resp *admissionv1.AdmissionResponse, fieldPath, why string) {
	t.Helper()
	if fieldPath == "" {
		if !resp.Allowed {
			t.Fatalf("denied: %s", resp.Result.Message)
		}
		return
	}
	if resp.Allowed {
		t.Fatalf("allowed; want a rejection of %s", fieldPath)
	}
	if resp.Result.Code != 422 || !strings.Contains(resp.Result.Message, fieldPath+":") || !strings.Contains(resp.Result.Message, why) {
		t.Fatalf("rejection %d %q; want 422 naming %s because %q", resp.Result.Code, resp.Result.Message, fieldPath, why)
	}
	found := false
	for _, c := range resp.Result.Details.Causes {
		found = found || c.Field == fieldPath
	}
	if !found {
		t.Fatalf("causes %+v do not name %s", resp.Result.Details.Causes, fieldPath)
	}
}

const vmiJSON = `{"metadata":{"name":"vmi1"},"spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},
 "devices":{"disks":[{"name":"root"}]}},"volumes":[{"name":"root","containerDisk":{"image":"img"}}]}}`

func TestValidateVMI(t *testing.T) {
	for _, tc := range []struct {
		name, field, why string
		edit             func(m map[string]any)
	}{
		{name: "valid", edit: func(map[string]any) {}},
		{name: "disk without volume", field: "spec.domain.devices.disks[0].name", why: "no volume", edit: func(m map[string]any) {
			at(m, "spec", "domain", "devices", "disks", 0).(map[string]any)["name"] = "x"
		}},
		{name: "unknown volume kind", field: "spec.volumes[0].hostPath", why: "supported values", edit: func(m map[string]any) {
			at(m, "spec", "volumes", 0).(map[string]any)["hostPath"] = map[string]any{"path": "/"}
		}},
		{name: "two volume sources", field: "spec.volumes[0]", why: "exactly one", edit: func(m map[string]any) {
			at(m, "spec", "volumes", 0).(map[string]any)["emptyDisk"] = map[string]any{"capacity": "1Gi"}
		}},
		{name: "negative grace", field: "spec.terminationGracePeriodSeconds", why: "negative", edit: func(m map[string]any) {
			at(m, "spec").(map[string]any)["terminationGracePeriodSeconds"] = -1
		}},
		{name: "memory too small", field: "spec.domain.memory.guest", why: "too small", edit: func(m map[string]any) {
			at(m, "spec", "domain").(map[string]any)["memory"] = map[string]any{"guest": "1k"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, tc.edit))), tc.field, tc.why)
		})
	}
}

const rsJSON = `{"metadata":{"name":"rs1"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},
 "spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},"devices":{}}}}}}`

func TestValidateVMIRS(t *testing.T) {
	for _, tc := range []struct {
		name, field, why string
		edit             func(m map[string]any)
	}{
		{name: "valid", edit: func(map[string]any) {}},
		{name: "name leaves no room for the instance suffix", field: "metadata.name", why: "57 characters", edit: func(m map[string]any) {
			at(m, "metadata").(map[string]any)["name"] = strings.Repeat("a", 60)
		}},
		{name: "selector does not match", field: "spec.selector", why: "does not match", edit: func(m map[string]any) {
			at(m, "spec", "selector", "matchLabels").(map[string]any)["app"] = "b"
		}},
		{name: "disk without volume", field: "spec.template.spec.domain.devices.disks[0].name", why: "no volume", edit: func(m map[string]any) {
			at(m, "spec", "template", "spec", "domain", "devices").(map[string]any)["disks"] = []any{map[string]any{"name": "d"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, validate(review(ReplicaSets, admissionv1.Create, edit(t, rsJSON, tc.edit))), tc.field, tc.why)
		})
	}
}

func TestValidateIgnoresOtherOperationsAndResources(t *testing.T) {
	if r := validate(review(VirtualMachines, admissionv1.Delete, nil)); !r.Allowed {
		t.Fatal("delete denied")
	}
	if r := validate(review("pods", admissionv1.Create, []byte(`{}`))); !r.Allowed {
		t.Fatal("other resource denied")
	}
	if r := validate(review(VirtualMachines, admissionv1.Create, []byte(`{"spec":`))); r.Allowed || r.Result.Code != 400 {
		t.Fatalf("undecodable object: %+v", r)
	}
	// A value of the wrong type is a 422 naming the field.
	checkResponse(t, validate(review(VirtualMachines, admissionv1.Create, []byte(`{"spec":7}`))), "spec", "must be an object")
}
