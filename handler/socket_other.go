//go:build !linux

package handler

import (
	"errors"
	"net"
)

// dialLauncherSocket needs Linux (O_PATH and /proc/self/fd).
func dialLauncherSocket(_, _ string) (net.Conn, error) {
	return nil, errors.New("reaching a launcher's libvirt socket needs Linux")
}

// peerPID needs Linux (SO_PEERCRED).
func peerPID(net.Conn) int { return 0 }

// listenLauncherSocket needs Linux (/proc/self/fd).
func listenLauncherSocket(_, _ string) (net.Listener, error) {
	return nil, errors.New("listening in a launcher pod needs Linux")
}

// makeLauncherDir needs Linux, as the rest of the migration.
func makeLauncherDir(_, _ string) error { return errors.New("needs Linux") }
