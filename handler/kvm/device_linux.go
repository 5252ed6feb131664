//go:build linux

package kvm

import (
	"os"

	"golang.org/x/sys/unix"
)

// KVM ioctl numbers: _IO(KVMIO=0xAE, nr) from linux/kvm.h. golang.org/x/sys does not define
// them.
const (
	ioctlGetAPIVersion  = 0xAE00
	ioctlCreateVM       = 0xAE01
	ioctlCheckExtension = 0xAE03
)

type linuxDevice struct{ fd int }

func openDevice(path string) (Device, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &linuxDevice{fd: fd}, nil
}

func (d *linuxDevice) ioctl(req, arg uintptr) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(d.fd), req, arg)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

func (d *linuxDevice) APIVersion() (int, error) { return d.ioctl(ioctlGetAPIVersion, 0) }

func (d *linuxDevice) CheckExtension(capability int) (int, error) {
	return d.ioctl(ioctlCheckExtension, uintptr(capability))
}

// CreateVM creates a VM of the default machine type (0) and closes it: a VM costs kernel
// memory and the probe only needs to know the ioctl works.
func (d *linuxDevice) CreateVM() error {
	vm, err := d.ioctl(ioctlCreateVM, 0)
	if err != nil {
		return err
	}
	return unix.Close(vm)
}

func (d *linuxDevice) Close() error { return unix.Close(d.fd) }
