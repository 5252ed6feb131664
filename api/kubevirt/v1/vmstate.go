package v1

// VMStateClaimPrefix names the claim that keeps a VM's persistent TPM and EFI state across its
// instances, KubeVirt's backend storage: persistent-state-for-<VM name>.
const VMStateClaimPrefix = "persistent-state-for-"

// PersistentTPM reports whether the guest's TPM keeps its state across restarts.
func (s *VirtualMachineInstanceSpec) PersistentTPM() bool {
	tpm := s.Domain.Devices.TPM
	return tpm.IsEnabled() && tpm.Persistent != nil && *tpm.Persistent
}

// PersistentEFI reports whether the guest's EFI variables are kept across restarts.
func (s *VirtualMachineInstanceSpec) PersistentEFI() bool {
	fw := s.Domain.Firmware
	if fw == nil || fw.Bootloader == nil || fw.Bootloader.EFI == nil {
		return false
	}
	return fw.Bootloader.EFI.Persistent != nil && *fw.Bootloader.EFI.Persistent
}

// KeepsState reports whether the instance needs its VM's state claim.
func (s *VirtualMachineInstanceSpec) KeepsState() bool { return s.PersistentTPM() || s.PersistentEFI() }
