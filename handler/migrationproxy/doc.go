// Package migrationproxy carries a live migration's connections between two nodes. Launcher
// pods have neither host ports nor a route to each other's sockets, so the node agents relay:
// on the source node a Source listens on unix sockets in the source pod, where libvirt and
// QEMU connect, and forwards each connection over the handlers' mutual TLS to the Target on
// the destination node, which connects it to the matching unix socket in the target pod.
//
// Each forwarded connection starts, after the TLS handshake, with the name of its channel and
// a newline; everything after that is the channel's own bytes, both ways, end of stream
// included, so that libvirt, QEMU and NBD see one plain stream end to end.
package migrationproxy

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Channels of one migration, named in each forwarded connection's first line.
const (
	Libvirt = "libvirt" // libvirt's peer-to-peer control connection
	Memory  = "memory"  // QEMU's migration stream
	Disks   = "disks"   // NBD, one connection per disk (block migration)
)

const (
	// maxHeader bounds the channel line a target reads before it knows who is talking.
	maxHeader = 32
	// setupTimeout bounds the TLS handshake with the channel line, and each dial: a migration
	// that cannot connect within it is better failed than left hanging.
	setupTimeout = 10 * time.Second
	// maxConns bounds the connections a proxy forwards at once, so that a peer cannot
	// exhaust the agent. A migration needs libvirt's, the memory stream and one per disk, so
	// this leaves room for VMs with many volumes.
	maxConns = 64
)

// Dial connects to a channel's socket in the target pod. The caller provides it: the pod owns
// its directories, so the node agent dials without following the paths it finds there.
type Dial func(ctx context.Context) (net.Conn, error)

// checkChannels refuses an empty map, names other than the channels above and missing
// values, so that a typo fails at setup rather than as a dropped connection mid-migration.
func checkChannels[V any](m map[string]V, missing func(V) bool) error {
	if len(m) == 0 {
		return fmt.Errorf("no channel")
	}
	for ch, v := range m {
		switch ch {
		case Libvirt, Memory, Disks:
		default:
			return fmt.Errorf("unknown channel %q", ch)
		}
		if missing(v) {
			return fmt.Errorf("channel %s: nothing to connect it to", ch)
		}
	}
	return nil
}
