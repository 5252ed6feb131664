package admission

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestAccessCredentialsAndFirmware(t *testing.T) {
	secret := v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "keys"}}
	noCloud := v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}
	noCloudVolume := []v1.Volume{{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{}}}}
	key := func(m v1.SSHPublicKeyAccessCredentialPropagationMethod) []v1.AccessCredential {
		return []v1.AccessCredential{{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{Source: secret, PropagationMethod: m}}}
	}
	for _, tc := range []struct {
		name    string
		spec    v1.VirtualMachineInstanceSpec
		wantErr string // "" accepts
	}{
		{name: "noCloud keys with a noCloud volume", spec: v1.VirtualMachineInstanceSpec{Volumes: noCloudVolume, AccessCredentials: key(noCloud)}},
		{name: "noCloud keys without the volume", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(noCloud)},
			wantErr: "spec.accessCredentials[0].sshPublicKey.propagationMethod.noCloud: Invalid value: \"noCloud\": needs a cloudInitNoCloud volume"},
		{name: "configDrive keys without the volume", spec: v1.VirtualMachineInstanceSpec{Volumes: noCloudVolume,
			AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &v1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}})},
			wantErr: "needs a cloudInitConfigDrive volume"},
		{name: "guest agent", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root", "debian"}}})}},
		{name: "guest agent without users", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{}})},
			wantErr: "qemuGuestAgent.users: Required value"},
		{name: "guest agent, a user name that is not one", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{
			QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root", "a:b,c"}}})},
			wantErr: `qemuGuestAgent.users[1]: Invalid value: "a:b,c": must be a user name`},
		{name: "guest agent and noCloud", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{
			NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}, QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"root"}}})},
			wantErr: "set one propagation method"},
		{name: "no propagation", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: key(v1.SSHPublicKeyAccessCredentialPropagationMethod{})},
			wantErr: "propagationMethod: Required value"},
		{name: "passwords through the guest agent", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: []v1.AccessCredential{{UserPassword: &v1.UserPasswordAccessCredential{
			Source:            v1.UserPasswordAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "pw"}},
			PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}}}}}}},
		{name: "passwords from nowhere", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: []v1.AccessCredential{{UserPassword: &v1.UserPasswordAccessCredential{
			PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}}}}}},
			wantErr: "userPassword.source.secret: Required value"},
		{name: "passwords by no method", spec: v1.VirtualMachineInstanceSpec{AccessCredentials: []v1.AccessCredential{{UserPassword: &v1.UserPasswordAccessCredential{
			Source: v1.UserPasswordAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "pw"}}}}}},
			wantErr: "userPassword.propagationMethod.qemuGuestAgent: Required value"},
		{name: "efi without secure boot", spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}}}}},
		{name: "persistent efi", spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{Persistent: ptr.To(true)}}}}}},
		{name: "bios and efi", spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{Bootloader: &v1.Bootloader{BIOS: &v1.BIOS{}, EFI: &v1.EFI{}}}}},
			wantErr: "set bios or efi, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := field.NewPath("spec")
			errs := append(accessCredentials(path.Child("accessCredentials"), &tc.spec), firmware(path.Child("domain", "firmware"), tc.spec.Domain.Firmware)...)
			got := errs.ToAggregate()
			switch {
			case tc.wantErr == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tc.wantErr)):
				t.Errorf("got %v, want %q", got, tc.wantErr)
			}
		})
	}
}
