package downwardmetrics

import (
	"context"
	"os"
	"time"

	"k8s.io/klog/v2"
)

// Refresh is how often the disk is rewritten: KubeVirt's period.
const Refresh = 5 * time.Second

// Config is what one launcher serves.
type Config struct {
	// Node is the node's name (HostName).
	Node string
	// Disk is the volume's disk, made by CreateDisk; empty for none.
	Disk string
	// Socket is where QEMU listens with the device's port; empty for none.
	Socket string
	// Stats reads the guest's figures; it fails while the domain does not run.
	Stats func() (VMStats, error)
	Host  Host
}

// Run serves the disk and the port until ctx ends.
func Run(ctx context.Context, cfg Config) {
	if cfg.Socket != "" {
		// Until the domain runs, the answer is an empty document.
		go ServeChannel(ctx, cfg.Socket, func() []byte { doc, _ := cfg.report(); return doc.Marshal() })
	}
	if cfg.Disk == "" {
		return
	}
	f, err := os.OpenFile(cfg.Disk, os.O_RDWR, 0)
	if err != nil {
		klog.ErrorS(err, "downward metrics disk")
		return
	}
	defer f.Close()
	tick := time.NewTicker(Refresh)
	defer tick.Stop()
	for {
		// Until the domain runs there is nothing to say of the guest: the disk keeps its
		// empty document.
		if doc, ok := cfg.report(); ok {
			if err := WriteDisk(f, doc.Marshal()); err != nil {
				klog.ErrorS(err, "downward metrics disk")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (cfg Config) report() (Document, bool) {
	vm, err := cfg.Stats()
	if err != nil {
		klog.V(2).InfoS("downward metrics: no figures of the guest", "err", err)
		return Document{}, false
	}
	return Report(cfg.Node, vm, cfg.Host.Metrics(time.Now())), true
}
