package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestBadText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"console=ttyS0 no_timer_check", ""},
		{"ünïcödé ✓", ""},
		{"", ""},
		{"console=ttyS0\n", "must not contain control characters (found 0x0a at byte 13)"},
		{"a\tb", "must not contain control characters (found 0x09 at byte 1)"},
		{"\x00", "must not contain control characters (found 0x00 at byte 0)"},
		{"del\x7f", "must not contain control characters (found 0x7f at byte 3)"},
		{"ok\xffno", "must be valid UTF-8 (invalid byte 0xff at byte 2)"},
		{"x\uFFFE", "must not contain the non-character U+FFFE (at byte 1)"},
	} {
		if got := badText(tc.in); got != tc.want {
			t.Errorf("badText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDomainText: every string the node writes into the domain, the kernel command line or
// the launcher's arguments is refused with a control character, naming the field.
func TestDomainText(t *testing.T) {
	domain := func(m map[string]any) map[string]any { return at(m, "spec", "domain").(map[string]any) }
	kernelBoot := func(kb map[string]any) func(m map[string]any) {
		return func(m map[string]any) { domain(m)["firmware"] = map[string]any{"kernelBoot": kb} }
	}
	container := func(c map[string]any) map[string]any {
		c["image"] = "img"
		return map[string]any{"container": c}
	}
	const control = "must not contain control characters"
	for _, tc := range []struct {
		name, field, why string
		edit             func(m map[string]any)
	}{
		{name: "kernel arguments", field: "spec.domain.firmware.kernelBoot.kernelArgs", why: control + " (found 0x0a at byte 13)",
			edit: kernelBoot(map[string]any{"kernelArgs": "console=ttyS0\n", "container": map[string]any{"image": "img", "kernelPath": "/k"}})},
		{name: "kernel path", field: "spec.domain.firmware.kernelBoot.container.kernelPath", why: control, edit: kernelBoot(container(map[string]any{"kernelPath": "/boot/\x1bk"}))},
		{name: "initrd path", field: "spec.domain.firmware.kernelBoot.container.initrdPath", why: control, edit: kernelBoot(container(map[string]any{"kernelPath": "/k", "initrdPath": "/i\r"}))},
		{name: "an initrd without a kernel", field: "spec.domain.firmware.kernelBoot.container.kernelPath", why: "QEMU refuses -initrd without -kernel",
			edit: kernelBoot(container(map[string]any{"initrdPath": "/i"}))},
		{name: "kernel arguments without a kernel", field: "spec.domain.firmware.kernelBoot.container", why: "need a kernel",
			edit: kernelBoot(map[string]any{"kernelArgs": "quiet"})},
		{name: "firmware serial", field: "spec.domain.firmware.serial", why: control + " (found 0x7f at byte 1)", edit: func(m map[string]any) {
			domain(m)["firmware"] = map[string]any{"serial": "s\x7f"}
		}},
		{name: "firmware uuid", field: "spec.domain.firmware.uuid", why: control, edit: func(m map[string]any) {
			domain(m)["firmware"] = map[string]any{"uuid": "11111111-2222-4333-8444-555555555555\n"}
		}},
		{name: "firmware uuid not a UUID", field: "spec.domain.firmware.uuid", why: "must be a UUID", edit: func(m map[string]any) {
			domain(m)["firmware"] = map[string]any{"uuid": "not-a-uuid"}
		}},
		{name: "disk serial", field: "spec.domain.devices.disks[0].serial", why: control, edit: func(m map[string]any) {
			at(m, "spec", "domain", "devices", "disks", 0).(map[string]any)["serial"] = "abc\x00"
		}},
		{name: "disk serial libvirt refuses", field: "spec.domain.devices.disks[0].serial", why: "letters, digits", edit: func(m map[string]any) {
			at(m, "spec", "domain", "devices", "disks", 0).(map[string]any)["serial"] = "a/b"
		}},
		{name: "cpu model", field: "spec.domain.cpu.model", why: control, edit: func(m map[string]any) { domain(m)["cpu"] = map[string]any{"model": "Nehalem\n"} }},
		{name: "machine type", field: "spec.domain.machine.type", why: "QEMU machine type", edit: func(m map[string]any) {
			domain(m)["machine"] = map[string]any{"type": "q35,accel=kvm"}
		}},
		{name: "hostname", field: "spec.hostname", why: control + " (found 0x09 at byte 4)", edit: func(m map[string]any) { at(m, "spec").(map[string]any)["hostname"] = "host\tname" }},
		{name: "containerDisk path", field: "spec.volumes[0].containerDisk.path", why: control, edit: func(m map[string]any) {
			at(m, "spec", "volumes", 0, "containerDisk").(map[string]any)["path"] = "/disk/\x01"
		}},
		{name: "unicode and spaces are fine", edit: func(m map[string]any) {
			domain(m)["firmware"] = map[string]any{"serial": "Série 7 ✓", "kernelBoot": container(map[string]any{"kernelPath": "/boot/vmlinuz"})}
			domain(m)["firmware"].(map[string]any)["kernelBoot"].(map[string]any)["kernelArgs"] = "console=ttyS0 root=LABEL=système"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, tc.edit))), tc.field, tc.why)
		})
	}
}

// TestTemplatesAreCheckedToo: a VM's and a replica set's templates get the same checks.
func TestTemplatesAreCheckedToo(t *testing.T) {
	resp := validate(review(VirtualMachines, admissionv1.Create, edit(t, vmJSON, func(m map[string]any) {
		at(tplSpec(m), "domain").(map[string]any)["cpu"] = map[string]any{"cores": 100000}
	})))
	checkResponse(t, resp, "spec.template.spec.domain.cpu.cores", "more than the 288 QEMU's q35 machine accepts")
	resp = validate(review(ReplicaSets, admissionv1.Create, edit(t, rsJSON, func(m map[string]any) {
		at(m, "spec", "template", "spec").(map[string]any)["hostname"] = "a\nb"
	})))
	checkResponse(t, resp, "spec.template.spec.hostname", "must not contain control characters (found 0x0a at byte 1)")
}
