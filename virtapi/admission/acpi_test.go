package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestACPITables(t *testing.T) {
	withACPI := func(acpi map[string]any, volume map[string]any) func(m map[string]any) {
		return func(m map[string]any) {
			s := at(m, "spec").(map[string]any)
			at(s, "domain").(map[string]any)["firmware"] = map[string]any{"acpi": acpi}
			if volume != nil {
				s["volumes"] = append(s["volumes"].([]any), volume)
			}
		}
	}
	secret := map[string]any{"name": "tables", "secret": map[string]any{"secretName": "license"}}
	const acpi = "spec.domain.firmware.acpi"
	for _, tc := range []struct {
		name       string
		acpi       map[string]any
		volume     map[string]any
		field, why string
	}{
		{name: "SLIC from a secret volume", acpi: map[string]any{"slicNameRef": "tables"}, volume: secret},
		{name: "SLIC and MSDM from one secret", acpi: map[string]any{"slicNameRef": "tables", "msdmNameRef": "tables"}, volume: secret},
		{name: "no table", acpi: map[string]any{}, field: acpi, why: "slicNameRef or msdmNameRef"},
		{name: "no such volume", acpi: map[string]any{"msdmNameRef": "nowhere"}, volume: secret, field: acpi + ".msdmNameRef", why: "does not have a matching volume"},
		{name: "not a secret", acpi: map[string]any{"slicNameRef": "tables"}, volume: map[string]any{"name": "tables", "configMap": map[string]any{"name": "license"}},
			field: acpi + ".slicNameRef", why: "must name a secret volume: the table is its secret's slic.bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, withACPI(tc.acpi, tc.volume))), DefaultLimits()), tc.field, tc.why)
		})
	}
}
