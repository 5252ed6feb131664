package launcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"
)

// watchConfig is what the watch loop needs to know.
type watchConfig struct {
	// Domain is the libvirt name of the instance's domain, <namespace>_<name>.
	Domain string
	// Grace is how long an ACPI shutdown may take on SIGTERM before the domain is destroyed;
	// 0 destroys at once.
	Grace time.Duration
	// StopWait bounds the wait for the stopped event after a destroy: the pod is going away,
	// so the launcher exits 0 even if libvirt never confirms.
	StopWait time.Duration
}

// errLibvirtGone is returned when the connection to libvirtd drops: the domain can no longer
// be followed, and the handler cannot reach it either.
var errLibvirtGone = errors.New("lost the connection to libvirtd")

// watch follows the domain until the launcher should exit and returns the exit status.
// term closes on SIGTERM; daemonDied receives libvirtd's exit. An error means exit 1.
func watch(hv hypervisor, cfg watchConfig, term <-chan struct{}, daemonDied <-chan ExitStatus) (int, error) {
	// Not the signal context: the subscription must outlive SIGTERM, as the shutdown that
	// follows is only seen through it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := hv.Events(ctx)
	if err != nil {
		return 1, err
	}
	t := &tracker{name: cfg.Domain}
	state, exists, err := hv.State(cfg.Domain)
	if err != nil {
		return 1, fmt.Errorf("state of domain %s: %w", cfg.Domain, err)
	}
	t.initial(state)
	klog.InfoS("following domain", "domain", cfg.Domain, "defined", exists, "state", state, "started", t.started)

	var graceExpired, stopDeadline <-chan time.Time
	destroy := func(why string) {
		klog.InfoS("destroying domain", "domain", cfg.Domain, "why", why)
		if err := hv.Destroy(cfg.Domain); err != nil {
			// Most likely it stopped meanwhile; its stopped event is on the way.
			klog.ErrorS(err, "destroy failed", "domain", cfg.Domain)
		}
		stopDeadline = time.After(cfg.StopWait)
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return 1, errLibvirtGone
			}
			if ev.Domain != cfg.Domain {
				continue
			}
			klog.InfoS("domain event", "domain", ev.Domain, "event", ev.String())
			if v := t.observe(ev); v.done {
				klog.InfoS("domain is gone, exiting", "domain", cfg.Domain, "reason", v.reason, "exitCode", v.code)
				return v.code, nil
			}

		case st := <-daemonDied:
			return 1, fmt.Errorf("libvirtd exited: %s", st)

		case <-term:
			term = nil // once: later SIGTERMs change nothing
			t.terminating = true
			state, exists, err := hv.State(cfg.Domain)
			if err != nil {
				// Exiting ends the container and QEMU with it; nothing better to do.
				klog.ErrorS(err, "SIGTERM: cannot get the domain's state, exiting", "domain", cfg.Domain)
				return 0, nil
			}
			if !exists || !active(state) {
				klog.InfoS("SIGTERM: no running domain, exiting", "domain", cfg.Domain, "defined", exists, "state", state)
				return 0, nil
			}
			if cfg.Grace <= 0 {
				destroy("SIGTERM with a grace period of 0")
				continue
			}
			klog.InfoS("SIGTERM: shutting the guest down (ACPI power button)", "domain", cfg.Domain, "gracePeriod", cfg.Grace)
			if err := hv.Shutdown(cfg.Domain); err != nil {
				// E.g. a paused guest: nothing will make it power off, so waiting is useless.
				destroy(fmt.Sprintf("the ACPI shutdown failed: %v", err))
				continue
			}
			graceExpired = time.After(cfg.Grace)

		case <-graceExpired:
			graceExpired = nil
			destroy(fmt.Sprintf("the guest did not shut down within %s", cfg.Grace))

		case <-stopDeadline:
			klog.InfoS("no stopped event after destroy, exiting", "domain", cfg.Domain, "waited", cfg.StopWait)
			return 0, nil
		}
	}
}
