package admission

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// firmware refuses a bootloader that is both BIOS and EFI.
func firmware(path *field.Path, fw *v1.Firmware) field.ErrorList {
	if fw == nil || fw.Bootloader == nil {
		return nil
	}
	b, p := fw.Bootloader, path.Child("bootloader")
	var errs field.ErrorList
	if b.BIOS != nil && b.EFI != nil {
		errs = append(errs, field.Invalid(p, "bios and efi", "set bios or efi, not both"))
	}
	return errs
}

// accessCredentials checks that every SSH key reaches the guest: from a Secret, through a
// cloud-init volume of the kind its propagation names, or through the guest agent to the
// users it names; and that passwords come from a Secret through the guest agent.
func accessCredentials(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	var hasNoCloud, hasConfigDrive bool
	for _, vol := range spec.Volumes {
		hasNoCloud = hasNoCloud || vol.CloudInitNoCloud != nil
		hasConfigDrive = hasConfigDrive || vol.CloudInitConfigDrive != nil
	}
	var errs field.ErrorList
	for i, cred := range spec.AccessCredentials {
		p := path.Index(i)
		if pw := cred.UserPassword; pw != nil {
			pp := p.Child("userPassword")
			if pw.Source.Secret == nil {
				errs = append(errs, field.Required(pp.Child("source", "secret"), "the passwords come from a Secret: each key a user name, its value the password"))
			}
			if pw.PropagationMethod.QemuGuestAgent == nil {
				errs = append(errs, field.Required(pp.Child("propagationMethod", "qemuGuestAgent"), "passwords are set through the guest agent"))
			}
		}
		k := cred.SSHPublicKey
		if k == nil {
			if cred.UserPassword == nil {
				errs = append(errs, field.Required(p.Child("sshPublicKey"), "an access credential needs sshPublicKey or userPassword"))
			}
			continue
		}
		kp := p.Child("sshPublicKey")
		if k.Source.Secret == nil {
			errs = append(errs, field.Required(kp.Child("source", "secret"), "the keys come from a Secret"))
		}
		m, mp := k.PropagationMethod, kp.Child("propagationMethod")
		switch {
		case m.QemuGuestAgent != nil && (m.NoCloud != nil || m.ConfigDrive != nil):
			errs = append(errs, field.Invalid(mp, "qemuGuestAgent and a cloud-init method", "set one propagation method"))
		case m.QemuGuestAgent != nil:
			errs = append(errs, agentUsers(mp.Child("qemuGuestAgent", "users"), m.QemuGuestAgent.Users)...)
		case m.NoCloud != nil && m.ConfigDrive != nil:
			errs = append(errs, field.Invalid(mp, "noCloud and configDrive", "set one propagation method"))
		case m.NoCloud != nil && !hasNoCloud:
			errs = append(errs, field.Invalid(mp.Child("noCloud"), "noCloud", "needs a cloudInitNoCloud volume to carry the keys"))
		case m.ConfigDrive != nil && !hasConfigDrive:
			errs = append(errs, field.Invalid(mp.Child("configDrive"), "configDrive", "needs a cloudInitConfigDrive volume to carry the keys"))
		case m.NoCloud == nil && m.ConfigDrive == nil:
			errs = append(errs, field.Required(mp, "set noCloud, configDrive or qemuGuestAgent"))
		}
	}
	return errs
}

// userNameRE is a POSIX user name, as useradd takes it (and without the launcher's list
// separators).
var userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`)

// agentUsers checks the users whose keys the guest agent sets: at least one, each a user name.
func agentUsers(p *field.Path, users []string) field.ErrorList {
	if len(users) == 0 {
		return field.ErrorList{field.Required(p, "name the guest users whose authorized keys the guest agent sets")}
	}
	var errs field.ErrorList
	for i, u := range users {
		if !userNameRE.MatchString(u) {
			errs = append(errs, field.Invalid(p.Index(i), u, "must be a user name: lowercase letters, digits, '_', '.' or '-', starting with a letter or '_', at most 32 characters"))
		}
	}
	return errs
}
