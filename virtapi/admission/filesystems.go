package admission

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// virtiofsContainerPrefix names a filesystem's virtiofsd container in the launcher pod:
// virtiofs-<filesystem name> (controller/vmi/virtiofs.go), which must be a DNS label.
const virtiofsContainerPrefix = "virtiofs-"

// filesystems: each filesystem shares the volume of its name through virtiofs, as in
// KubeVirt: a volume of a kind virtiofsd can serve (a claim's file system, the files of a
// configMap, secret, serviceAccount or downwardAPI), which no disk also shows the guest.
func filesystems(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, fs := range spec.Domain.Devices.Filesystems {
		p := path.Child("domain", "devices", "filesystems").Index(i)
		if fs.Virtiofs == nil {
			errs = append(errs, field.Required(p.Child("virtiofs"), "virtiofs is the only filesystem type"))
		}
		if seen[fs.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), fs.Name))
			continue
		}
		seen[fs.Name] = true
		for _, msg := range validation.IsDNS1123Label(virtiofsContainerPrefix + fs.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), fs.Name,
				fmt.Sprintf("the launcher pod's container %q would be invalid: %s", virtiofsContainerPrefix+fs.Name, msg)))
		}
		i := slices.IndexFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == fs.Name })
		if i < 0 {
			errs = append(errs, field.Invalid(p.Child("name"), fs.Name, "no volume of this name in spec.volumes: a filesystem shares the volume named as it"))
			continue
		}
		kinds := spec.Volumes[i].SourceKinds()
		if len(kinds) == 1 && !slices.Contains(v1.VirtiofsVolumeKinds, kinds[0]) {
			errs = append(errs, field.Invalid(path.Child("volumes").Index(i), kinds[0],
				"a filesystem shares a "+strings.Join(v1.VirtiofsVolumeKinds, ", ")+" volume, not a "+kinds[0]))
		}
		for j, disk := range spec.Domain.Devices.Disks {
			if disk.Name == fs.Name {
				errs = append(errs, field.Invalid(path.Child("domain", "devices", "disks").Index(j).Child("name"), disk.Name,
					"volume "+disk.Name+" is shared as a filesystem: the guest cannot see it as a disk too"))
			}
		}
	}
	return errs
}
