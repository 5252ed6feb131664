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
