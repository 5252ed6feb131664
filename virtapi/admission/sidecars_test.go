package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestHookSidecars(t *testing.T) {
	gated := DefaultLimits()
	gated.Sidecar = true
	const ann = "metadata.annotations[hooks.kubevirt.io/hookSidecars]"
	for _, tc := range []struct {
		name, sidecars string
		limits         Limits
		field, why     string
	}{
		{name: "without the gate, as KubeVirt by default", sidecars: `[{"image": "hook"}]`, limits: DefaultLimits(), field: ann, why: "Sidecar feature gate"},
		{name: "an image", sidecars: `[{"args": ["--version", "v1alpha2"], "image": "hook", "imagePullPolicy": "IfNotPresent"}]`, limits: gated},
		{name: "a ConfigMap script", sidecars: `[{"image": "shim", "configMap": {"name": "my-config-map", "key": "my_script.sh", "hookPath": "/usr/bin/onDefineDomain"}}]`, limits: gated},
		{name: "not JSON", sidecars: `[{"image": `, limits: gated, field: ann, why: "not a JSON list of hook sidecars"},
		{name: "an unknown field", sidecars: `[{"image": "x", "hostPath": {"path": "/var"}}]`, limits: gated, field: ann, why: `unknown field "hostPath"`},
		{name: "no image", sidecars: `[{"args": ["--version", "v1alpha2"]}]`, limits: gated, field: ann + "[0].image", why: "Required value"},
		{name: "a bad pull policy", sidecars: `[{"image": "x", "imagePullPolicy": "Sometimes"}]`, limits: gated, field: ann + "[0].imagePullPolicy", why: "supported values"},
		{name: "a claim", sidecars: `[{"image": "x", "pvc": {"name": "data", "volumePath": "/data"}}]`, limits: gated},
		{name: "a claim shared with compute, as KubeVirt's debug example", sidecars: `[{"args": ["--version", "v1alpha2"], "pvc": {"name": "debug-tools", "volumePath": "/debug", "sharedComputePath": "/var/run/debug"},
			"configMap": {"name": "my-config-map", "key": "my_script.sh", "hookPath": "/usr/bin/onDefineDomain"}}]`, limits: gated},
		{name: "a claim without a name", sidecars: `[{"image": "x", "pvc": {"volumePath": "/data"}}]`, limits: gated, field: ann + "[0].pvc.name", why: "Required value"},
		{name: "a claim's bad name", sidecars: `[{"image": "x", "pvc": {"name": "Data", "volumePath": "/data"}}]`, limits: gated, field: ann + "[0].pvc.name", why: "RFC 1123"},
		{name: "a claim without a volumePath", sidecars: `[{"image": "x", "pvc": {"name": "data"}}]`, limits: gated, field: ann + "[0].pvc.volumePath", why: "absolute, clean path"},
		{name: "a claim over the sockets", sidecars: `[{"image": "x", "pvc": {"name": "data", "volumePath": "/var/run"}}]`, limits: gated,
			field: ann + "[0].pvc.volumePath", why: "overlaps the sidecar's /var/run/kubevirt-hooks"},
		{name: "a claim at the script", sidecars: `[{"configMap": {"name": "cm", "key": "k", "hookPath": "/usr/bin/onDefineDomain"}, "pvc": {"name": "data", "volumePath": "/usr/bin"}}]`, limits: gated,
			field: ann + "[0].pvc.volumePath", why: "overlaps the sidecar's /usr/bin/onDefineDomain"},
		{name: "a claim over the launcher's private directory, through /run", sidecars: `[{"image": "x", "pvc": {"name": "data", "volumePath": "/data", "sharedComputePath": "/run/kubevirt-private/x"}}]`, limits: gated,
			field: ann + "[0].pvc.sharedComputePath", why: "overlaps the compute container's /var/run/kubevirt-private"},
		{name: "a claim over the image", sidecars: `[{"image": "x", "pvc": {"name": "data", "volumePath": "/data", "sharedComputePath": "/usr"}}]`, limits: gated,
			field: ann + "[0].pvc.sharedComputePath", why: "would hide the launcher image's /usr"},
		{name: "two claims at one place in compute", sidecars: `[{"image": "x", "pvc": {"name": "a", "volumePath": "/data", "sharedComputePath": "/opt/data"}},
			{"image": "y", "pvc": {"name": "b", "volumePath": "/data", "sharedComputePath": "/opt/data/b"}}]`, limits: gated,
			field: ann + "[1].pvc.sharedComputePath", why: "overlaps the compute container's /opt/data"},
		{name: "a relative hook path", sidecars: `[{"image": "x", "configMap": {"name": "cm", "key": "k", "hookPath": "onDefineDomain"}}]`, limits: gated,
			field: ann + "[0].configMap.hookPath", why: "absolute, clean path"},
		{name: "a PreCloudInitIso script", sidecars: `[{"args": ["--version", "v1alpha2"], "configMap": {"name": "cm", "key": "k", "hookPath": "/usr/bin/preCloudInitIso"}}]`, limits: gated},
		{name: "a PreCloudInitIso script in v1alpha1", sidecars: `[{"args": ["--version=v1alpha1"], "configMap": {"name": "cm", "key": "k", "hookPath": "/usr/bin/preCloudInitIso"}}]`, limits: gated,
			field: ann + "[0].args", why: "v1alpha1 has no PreCloudInitIso"},
		{name: "a bad key", sidecars: `[{"image": "x", "configMap": {"name": "cm", "key": "a/b", "hookPath": "/usr/bin/onDefineDomain"}}]`, limits: gated,
			field: ann + "[0].configMap.key", why: "valid config key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withSidecars := func(m map[string]any) {
				md := at(m, "metadata").(map[string]any)
				md["annotations"] = map[string]any{"hooks.kubevirt.io/hookSidecars": tc.sidecars}
			}
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, withSidecars)), tc.limits), tc.field, tc.why)
		})
	}
}
