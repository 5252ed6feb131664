package handler

import (
	"errors"
	"time"

	"github.com/digitalocean/go-libvirt"
)

// MigrationParams say where a live migration sends the domain: the target's libvirt (a
// qemu+unix URI on the source pod's proxy socket) and the unix sockets for QEMU's memory stream
// and, for block migration, its disks (NBD). Each path is the same in both launcher pods.
type MigrationParams struct {
	DestURI, MemoryURI, DisksURI string
	// Block copies the instance's local disks with the memory (NON_SHARED_INC: the target's
	// overlays back onto the same containerDisk images, so only what the guest wrote moves).
	Block bool
	// Timeout bounds the whole copy: on expiry the call returns and the caller aborts the job.
	Timeout time.Duration
	// BandwidthMiB caps the transfer rate in MiB/s (0: none).
	BandwidthMiB uint64
	// AutoConverge lets QEMU throttle a guest that dirties memory faster than it can be sent.
	AutoConverge bool
	// Unsafe skips libvirt's safety checks (UNSAFE), such as its refusal of a disk it finds
	// on a local file system when the migration does not copy it.
	Unsafe bool
}

// migrationFlags: live, peer to peer (the source's libvirtd talks to the target's through the
// proxy), and the domain defined on the target and gone from the source once it runs there.
const migrationFlags = libvirt.MigrateLive | libvirt.MigratePeer2peer | libvirt.MigratePersistDest |
	libvirt.MigrateUndefineSource

// MigrateDomain runs virDomainMigratePerform3Params, which returns once the guest runs on the
// target (or the migration failed). Closing the connection on timeout does not stop libvirt's
// job: the caller aborts it (AbortJob) on a connection of its own.
func (g *goLibvirt) MigrateDomain(name string, p MigrationParams) error {
	return g.call("migrating the domain", p.Timeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		params := []libvirt.TypedParam{{Field: libvirt.MigrateParamURI, Value: *libvirt.NewTypedParamValueString(p.MemoryURI)}}
		flags := migrationFlags
		if p.AutoConverge {
			flags |= libvirt.MigrateAutoConverge
		}
		if p.Unsafe {
			flags |= libvirt.MigrateUnsafe
		}
		if p.BandwidthMiB > 0 {
			params = append(params, libvirt.TypedParam{Field: libvirt.MigrateParamBandwidth, Value: *libvirt.NewTypedParamValueUllong(p.BandwidthMiB)})
		}
		if p.Block {
			params = append(params, libvirt.TypedParam{Field: libvirt.MigrateParamDisksURI, Value: *libvirt.NewTypedParamValueString(p.DisksURI)})
			flags |= libvirt.MigrateNonSharedInc
		}
		_, err = g.l.DomainMigratePerform3Params(dom, libvirt.OptString{p.DestURI}, params, nil, flags)
		return err
	})
}

// AbortJob cancels the domain's running job (virDomainAbortJob), such as an outgoing migration.
func (g *goLibvirt) AbortJob(name string) error {
	return g.onDomain("aborting the domain's job", name, g.l.DomainAbortJob)
}

// MigrationStats is libvirt's account of a completed migration, read on the target.
type MigrationStats struct {
	// Elapsed is the whole migration; Downtime the time the guest was paused for the switch.
	Elapsed, Downtime time.Duration
	// Bytes is what was sent (memory and, for block migration, disks).
	Bytes uint64
}

// CompletedMigration reads the statistics of the domain's last completed job
// (virDomainGetJobStats with COMPLETED): on a target, its incoming migration.
func (g *goLibvirt) CompletedMigration(name string) (MigrationStats, error) {
	var out MigrationStats
	err := g.call("reading the migration's statistics", queryTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		_, params, err := g.l.DomainGetJobStats(dom, libvirt.DomainJobStatsCompleted)
		if err != nil {
			return err
		}
		for _, p := range params {
			v, ok := p.Value.I.(uint64)
			if !ok {
				continue
			}
			switch p.Field {
			case libvirt.DomainJobTimeElapsed:
				out.Elapsed = time.Duration(v) * time.Millisecond
			case libvirt.DomainJobDowntime:
				out.Downtime = time.Duration(v) * time.Millisecond
			case libvirt.DomainJobDataProcessed:
				out.Bytes = v
			}
		}
		if out.Elapsed == 0 {
			return errNoCompletedJob
		}
		return nil
	})
	return out, err
}

// errNoCompletedJob: libvirt has no statistics of a completed job (yet: on a target they come
// a moment after the domain resumed).
var errNoCompletedJob = errors.New("no completed job")
