package v1

import (
	"slices"

	k8sv1 "k8s.io/api/core/v1"
)

// SecretsOf names, once each in order of appearance, the Secrets the instance reads at boot:
// cloud-init user and network data, SSH public keys and passwords.
func SecretsOf(spec *VirtualMachineInstanceSpec) []string {
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	ref := func(r *k8sv1.LocalObjectReference) {
		if r != nil {
			add(r.Name)
		}
	}
	for _, vol := range spec.Volumes {
		if ci := vol.CloudInitNoCloud; ci != nil {
			ref(ci.UserDataSecretRef)
			ref(ci.NetworkDataSecretRef)
		}
		if ci := vol.CloudInitConfigDrive; ci != nil {
			ref(ci.UserDataSecretRef)
			ref(ci.NetworkDataSecretRef)
		}
	}
	for _, cred := range spec.AccessCredentials {
		if k := cred.SSHPublicKey; k != nil && k.Source.Secret != nil {
			add(k.Source.Secret.SecretName)
		}
		if p := cred.UserPassword; p != nil && p.Source.Secret != nil {
			add(p.Source.Secret.SecretName)
		}
	}
	return names
}
