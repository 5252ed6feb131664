//go:build !linux

package kvm

import "errors"

// openDevice: KVM is a Linux interface; elsewhere Usable reports it unusable.
func openDevice(path string) (Device, error) {
	return nil, errors.New("KVM is only available on Linux")
}
