// Package admission is virt-api's admission logic, pure so it is table-tested and fuzzed:
// validation of VirtualMachines, instances and replica sets beyond what the CRD's CEL rules
// can say (cross-references between lists, derived names, unknown volume kinds), what would
// otherwise fail only at the node (guest memory, vCPU topology, emptyDisk sizes, strings
// bound for the domain XML; docs/admission.md lists them), an instance's fixed spec, defaulting
// as JSON patches, and the deprecation warning for spec.running. Every rejection is a
// field.Error naming the field and saying why.
package admission

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	apivalidation "github.com/vmctl/vmctl/api/kubevirt/v1/validation"
)

// knownVolumeKinds are the volume sources of KubeVirt's schema; anything else (a hostPath ...)
// is refused, so a VM spec reaches the node's files only through a hostDisk, which needs the
// HostDisk gate (hostdisk.go). Those the node cannot provide are refused with their reason
// by unsupportedVolumes.
var knownVolumeKinds = []string{"containerDisk", "cloudInitNoCloud", "cloudInitConfigDrive", "emptyDisk", "persistentVolumeClaim",
	"ephemeral", "configMap", "secret", "serviceAccount", "downwardAPI", "dataVolume", "hostDisk", "sysprep", "downwardMetrics"}

// launcherContainerPrefix names a containerDisk's init container in the launcher pod:
// volume-<volume name> (controller/vmi/layout.go), which must be a DNS label.
const launcherContainerPrefix = "volume-"

// replicaSuffixLen is what a replica set appends to its name for an instance: -xxxxx.
const replicaSuffixLen = 6

// validateInstanceSpec is the existing spec validation plus the cross-field rules and what
// would otherwise fail only at the node (hardware.go, text.go).
func validateInstanceSpec(path *field.Path, spec *v1.VirtualMachineInstanceSpec, raw json.RawMessage, disksMustMatch bool, limits Limits) field.ErrorList {
	errs := apivalidation.ValidateVirtualMachineInstanceSpec(path, spec)
	errs = append(errs, unknownVolumeKinds(path.Child("volumes"), raw)...)
	if disksMustMatch {
		errs = append(errs, disksWithoutVolume(path, spec)...)
	}
	errs = append(errs, memoryTooSmall(path.Child("domain"), &spec.Domain)...)
	errs = append(errs, cpuTopology(path.Child("domain"), &spec.Domain)...)
	errs = append(errs, emptyDisks(path.Child("volumes"), spec.Volumes, limits)...)
	errs = append(errs, hostDisks(path.Child("volumes"), spec.Volumes, limits)...)
	errs = append(errs, downwardMetrics(path, spec, limits)...)
	errs = append(errs, filesystems(path, spec)...)
	errs = append(errs, diskBusOptions(path.Child("domain", "devices", "disks"), spec.Domain.Devices.Disks)...)
	errs = append(errs, domainText(path, spec)...)
	errs = append(errs, volumeNames(path.Child("volumes"), spec.Volumes)...)
	errs = append(errs, firmware(path.Child("domain", "firmware"), spec.Domain.Firmware)...)
	errs = append(errs, acpiTables(path.Child("domain", "firmware", "acpi"), spec)...)
	errs = append(errs, accessCredentials(path.Child("accessCredentials"), spec)...)
	errs = append(errs, unsupported(path, spec)...)
	if spec.Hostname != "" && badText(spec.Hostname) == "" { // else domainText said why
		for _, msg := range validation.IsDNS1123Label(spec.Hostname) {
			errs = append(errs, field.Invalid(path.Child("hostname"), spec.Hostname, msg))
		}
	}
	return errs
}

// unknownVolumeKinds reads the volumes as sent (raw: the instance spec's JSON), since a
// typed decode silently drops the kinds it does not know.
func unknownVolumeKinds(path *field.Path, raw json.RawMessage) field.ErrorList {
	var spec struct {
		Volumes []map[string]json.RawMessage `json:"volumes"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &spec) != nil {
		return nil // the typed decode reports malformed JSON
	}
	var errs field.ErrorList
	for i, vol := range spec.Volumes {
		for key := range vol {
			if key != "name" && !slices.Contains(knownVolumeKinds, key) {
				errs = append(errs, field.NotSupported(path.Index(i).Child(key), key, knownVolumeKinds))
			}
		}
	}
	return errs
}

// disksWithoutVolume: every disk is backed by the volume of the same name.
func disksWithoutVolume(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	var errs field.ErrorList
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	seen := map[string]bool{}
	for i, d := range spec.Domain.Devices.Disks {
		p := path.Child("domain", "devices", "disks").Index(i).Child("name")
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(p, d.Name))
		}
		seen[d.Name] = true
		if !volumes[d.Name] {
			e := field.NotFound(p, d.Name)
			e.Detail = fmt.Sprintf("no volume named %q in %s", d.Name, path.Child("volumes"))
			errs = append(errs, e)
		}
	}
	return errs
}

// volumeNames: each volume's init container name, volume-<name>, must be a DNS label.
func volumeNames(path *field.Path, volumes []v1.Volume) field.ErrorList {
	var errs field.ErrorList
	for i, v := range volumes {
		for _, msg := range validation.IsDNS1123Label(launcherContainerPrefix + v.Name) {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), v.Name,
				fmt.Sprintf("the launcher pod's container %q would be invalid: %s", launcherContainerPrefix+v.Name, msg)))
		}
	}
	return errs
}

// instanceName: an instance's name is its guest's default hostname and its domain's name,
// so it must be a DNS label (63 characters, no dots), stricter than a object name. extra is
// what is appended to it (a replica set's -xxxxx).
func instanceName(path *field.Path, name string, extra int) field.ErrorList {
	if name == "" {
		return nil // generateName: checked once the name exists
	}
	var errs field.ErrorList
	probe := name + strings.Repeat("x", extra)
	for _, msg := range validation.IsDNS1123Label(probe) {
		if extra > 0 && len(probe) > validation.DNS1123LabelMaxLength {
			msg = fmt.Sprintf("must be no more than %d characters, as the instances it creates are named %s-xxxxx", validation.DNS1123LabelMaxLength-extra, name)
		}
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
