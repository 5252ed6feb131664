package admission

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestGuestMemoryFloor(t *testing.T) {
	domain := func(m map[string]any) map[string]any { return at(m, "spec", "domain").(map[string]any) }
	resources := func(m map[string]any, kind, q string) {
		domain(m)["resources"] = map[string]any{kind: map[string]any{"memory": q}}
	}
	for _, tc := range []struct {
		name, field string
		edit        func(m map[string]any)
	}{
		{name: "guest 1Mi, what used to fail at the node", field: "spec.domain.memory.guest", edit: func(m map[string]any) {
			domain(m)["memory"] = map[string]any{"guest": "1Mi"}
		}},
		{name: "request sizing the guest", field: "spec.domain.resources.requests.memory", edit: func(m map[string]any) { resources(m, "requests", "16Mi") }},
		{name: "limit sizing the guest", field: "spec.domain.resources.limits.memory", edit: func(m map[string]any) { resources(m, "limits", "16Mi") }},
		{name: "guest defaulted from the request names the request", field: "spec.domain.resources.requests.memory", edit: func(m map[string]any) {
			resources(m, "requests", "16Mi")
			domain(m)["memory"] = map[string]any{"guest": "16Mi"}
		}},
		{name: "a small pod request does not size a guest that has memory.guest", edit: func(m map[string]any) {
			resources(m, "requests", "16Mi")
			domain(m)["memory"] = map[string]any{"guest": "64Mi"}
		}},
		{name: "exactly the floor", edit: func(m map[string]any) { domain(m)["memory"] = map[string]any{"guest": "32Mi"} }},
		{name: "KubeVirt's cirros, 64M", edit: func(m map[string]any) { resources(m, "requests", "64M") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, tc.edit)))
			checkResponse(t, resp, tc.field, "too small for a guest to boot: at least 32Mi")
		})
	}
}

func TestCPUTopology(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		cores, sockets, threads uint32
		machine                 string
		field, want             string // want: the whole message; "" for allowed
	}{
		{name: "unset"},
		{name: "8 vCPUs", cores: 2, sockets: 2, threads: 2},
		{name: "255 sockets: APIC IDs 0 to 254", sockets: 255},
		{name: "100000 cores on q35", cores: 100000, field: "spec.domain.cpu.cores",
			want: "spec.domain.cpu.cores: Invalid value: 100000: sockets × cores × threads = 100000 vCPUs, more than the 288 QEMU's q35 machine accepts"},
		{name: "289 on a versioned q35", sockets: 289, machine: "pc-q35-7.2", field: "spec.domain.cpu.sockets",
			want: "spec.domain.cpu.sockets: Invalid value: 289: sockets × cores × threads = 289 vCPUs, more than the 288 QEMU's q35 machine accepts"},
		{name: "256 on i440fx", threads: 256, machine: "pc", field: "spec.domain.cpu.threads",
			want: "spec.domain.cpu.threads: Invalid value: 256: sockets × cores × threads = 256 vCPUs, more than the 255 QEMU's pc-i440fx machine accepts"},
		{name: "256 on q35: no IOMMU", sockets: 128, cores: 2, field: "spec.domain.cpu.sockets",
			want: "spec.domain.cpu.sockets: Invalid value: 128: sockets × cores × threads = 256 vCPUs, more than the 255 QEMU accepts without an IOMMU doing interrupt remapping, which the node does not give guests"},
		{name: "85 sockets of 3 cores: APIC IDs up to 338", sockets: 85, cores: 3, field: "spec.domain.cpu.sockets",
			want: "spec.domain.cpu.sockets: Invalid value: 85: sockets × cores × threads = 255 vCPUs, whose APIC IDs reach 338: QEMU needs an IOMMU doing interrupt remapping for IDs of 255 and above, which the node does not give guests; use powers of two for cores and threads"},
		{name: "the product overflows 64 bits", cores: 1<<32 - 1, sockets: 1<<32 - 1, threads: 1<<32 - 1, field: "spec.domain.cpu.cores",
			want: "sockets × cores × threads = 79228162458924105385300197375 vCPUs, more than the 288"},
		{name: "an unknown machine type still has the APIC limit", cores: 300, machine: "microvm", field: "spec.domain.cpu.cores", want: "300 vCPUs, more than the 255 QEMU accepts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &v1.DomainSpec{CPU: &v1.CPU{Cores: tc.cores, Sockets: tc.sockets, Threads: tc.threads}}
			if tc.machine != "" {
				d.Machine = &v1.Machine{Type: tc.machine}
			}
			errs := cpuTopology(field.NewPath("spec", "domain"), d)
			checkErrs(t, errs, tc.field, tc.want)
		})
	}
}

// checkErrs: errs is one error naming fieldPath whose message contains want, or none.
func checkErrs(t *testing.T, errs field.ErrorList, fieldPath, want string) {
	t.Helper()
	if fieldPath == "" {
		if len(errs) > 0 {
			t.Fatalf("refused: %v", errs)
		}
		return
	}
	if len(errs) != 1 || errs[0].Field != fieldPath || !strings.Contains(errs[0].Error(), want) {
		t.Fatalf("errors %v; want one naming %s saying %q", errs, fieldPath, want)
	}
}

func TestEmptyDiskCapacity(t *testing.T) {
	disk := func(capacity string) func(m map[string]any) {
		return func(m map[string]any) {
			s := at(m, "spec").(map[string]any)
			s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": "scratch", "emptyDisk": map[string]any{"capacity": capacity}})
		}
	}
	for _, tc := range []struct {
		name, capacity, field, why string
		limits                     Limits
	}{
		{name: "64Ti, what failed at the node", capacity: "64Ti", limits: DefaultLimits(), field: "spec.volumes[1].emptyDisk.capacity",
			why: "more than the 100Gi this cluster allows for an emptyDisk (virt-api --max-empty-disk-capacity)"},
		{name: "the default limit", capacity: "100Gi", limits: DefaultLimits()},
		{name: "a lower limit", capacity: "2Gi", limits: Limits{MaxEmptyDiskCapacity: resource.MustParse("1Gi")}, field: "spec.volumes[1].emptyDisk.capacity", why: "more than the 1Gi"},
		{name: "no limit", capacity: "64Ti"},
		{name: "zero", capacity: "0", limits: DefaultLimits(), field: "spec.volumes[1].emptyDisk.capacity", why: "must be greater than zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, disk(tc.capacity))), tc.limits), tc.field, tc.why)
		})
	}
}

// TestExamplesAreAdmitted: every VM, instance and replica set in examples/ passes the
// mutating and then the validating webhook, as `kubectl apply -f examples/` does.
func TestExamplesAreAdmitted(t *testing.T) {
	resources := map[string]string{"VirtualMachine": VirtualMachines, "VirtualMachineInstance": VirtualMachineInstances,
		"VirtualMachineInstanceReplicaSet": ReplicaSets}
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	seen := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			raw, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var meta struct{ Kind string }
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatal(err)
			}
			res, ok := resources[meta.Kind]
			if !ok {
				continue
			}
			seen++
			resp := Mutate(review(res, admissionv1.Create, raw))
			if resp.Patch != nil {
				p, err := jsonpatch.DecodePatch(resp.Patch)
				if err == nil {
					raw, err = p.Apply(raw)
				}
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
			}
			if r := validate(review(res, admissionv1.Create, raw)); !r.Allowed {
				t.Errorf("%s (%s): refused: %s", file, meta.Kind, r.Result.Message)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("checked %d objects; the examples hold at least 5", seen)
	}
}
