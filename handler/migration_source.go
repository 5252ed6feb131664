package handler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/migrationproxy"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// Event reasons of migrations on instances.
const (
	ReasonMigrated        = "Migrated"
	ReasonMigrationFailed = "MigrationFailed"
	// ReasonMigrationReceived is the target's account, in MigrationReceivedFormat: the
	// source node, the migration's seconds, the guest's pause in ms, the MiB sent.
	ReasonMigrationReceived = "MigrationReceived"
	MigrationReceivedFormat = "Received from node %s in %.2f s; the guest was paused %d ms; %.1f MiB sent"
)

// migrationTimeout bounds one copy: completionTimeoutPerGiB (KubeVirt's default 150 s) of the
// guest's memory, at least that long. QEMU throttles a guest that dirties memory faster than it
// is sent (auto-converge), so a copy that takes longer is stuck.
func migrationTimeout(vmi *v1.VirtualMachineInstance) time.Duration {
	perGiB := 150 * time.Second
	if c := vmi.Status.MigrationState.MigrationConfiguration; c != nil && c.CompletionTimeoutPerGiB != nil && *c.CompletionTimeoutPerGiB > 0 {
		perGiB = time.Duration(*c.CompletionTimeoutPerGiB) * time.Second
	}
	var bytes int64
	if m := vmi.Spec.Domain.Memory; m != nil && m.Guest != nil {
		bytes = m.Guest.Value()
	} else if q, ok := vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; ok {
		bytes = q.Value()
	}
	return max(perGiB, time.Duration(float64(bytes)/(1<<30)*float64(perGiB)))
}

// migrationTuning is the rate cap in MiB/s (0: none; a cap under 1 MiB/s rounds up to it,
// libvirt's unit), whether QEMU may throttle the guest (auto-converge when the configuration
// does not say) and whether libvirt's safety checks are overridden (not unless it says so),
// from the migration's configuration.
func migrationTuning(vmi *v1.VirtualMachineInstance) (bandwidthMiB uint64, autoConverge, unsafe bool) {
	c := vmi.Status.MigrationState.MigrationConfiguration
	if c == nil {
		return 0, true, false
	}
	if q := c.BandwidthPerMigration; q != nil && q.Sign() > 0 {
		bandwidthMiB = max(1, uint64((q.Value()+(1<<20)-1)>>20))
	}
	return bandwidthMiB, c.AllowAutoConverge == nil || *c.AllowAutoConverge, ptr.Deref(c.UnsafeMigrationOverride, false)
}

// outbound is a migration this node sends: the proxy out of the source pod and the libvirt
// call that copies the domain.
type outbound struct {
	uid     types.UID
	proxy   *migrationproxy.Source
	done    chan struct{}
	err     error     // set before done closes
	endedAt time.Time // likewise
	abortMu sync.Once
}

func (ob *outbound) finished() bool {
	select {
	case <-ob.done:
		return true
	default:
		return false
	}
}

// closeOutbound stops key's migration out: its proxy; the copy ends with it.
func (c *Controller) closeOutbound(key string) {
	if ob, ok := c.outbound.take(key, func(*outbound) bool { return false }); ok && ob.proxy != nil {
		_ = ob.proxy.Close()
	}
}

// sending says whether this node is the source of the instance's migration once the target
// is ready: from then until it ends, syncSource reports the instance, not its domain (which
// leaves this node).
func (c *Controller) sending(vmi *v1.VirtualMachineInstance) bool {
	s := vmi.Status.MigrationState
	return s != nil && s.SourceNode == c.opts.NodeName && vmi.Status.NodeName == c.opts.NodeName &&
		s.TargetNodeAddress != "" && !s.Completed
}

// targetReportWait bounds the wait for the target's word on a domain that left this node
// while libvirt's answer to the migration was lost.
const targetReportWait = 30 * time.Second

// domainStillHere says whether the instance's domain still runs or is paused in the source
// pod's libvirt, as after a failed migration; false when it left or libvirt cannot be reached
// (the source launcher exits once its domain migrated away).
func (c *Controller) domainStillHere(key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod) bool {
	lv, ok := c.sourceLibvirt(key, vmi, pod)
	if !ok {
		return false
	}
	st, err := lv.DomainState(DomainName(vmi))
	return err == nil && (st.State == libvirt.DomainRunning || st.State == libvirt.DomainPaused)
}

// sourceLibvirt is the source pod's libvirt, when the pod runs and it answers.
func (c *Controller) sourceLibvirt(key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod) (Libvirt, bool) {
	if pod == nil || pod.Status.Phase != corev1.PodRunning {
		return nil, false
	}
	lv, err := c.conns.get(key, pod.UID, DomainName(vmi), PrivateDir(c.opts.KubeletRoot, pod.UID))
	return lv, err == nil
}

// movedAway says whether the instance's guest left this node by a migration that succeeded:
// its domain is gone from here, which is no loss to report.
func (c *Controller) movedAway(vmi *v1.VirtualMachineInstance) bool {
	s := vmi.Status.MigrationState
	return s != nil && s.SourceNode == c.opts.NodeName && s.TargetNode != c.opts.NodeName && s.Completed && !s.Failed
}

// syncSource drives a migration out of this node: it starts the copy once the target is
// ready, aborts it when asked, and reports how it ended.
func (c *Controller) syncSource(ctx context.Context, key string, cached *v1.VirtualMachineInstance, pod *corev1.Pod) error {
	s := cached.Status.MigrationState
	ob, _ := c.outbound.get(key)
	if ob != nil && ob.uid != s.MigrationUID {
		c.abort(key, DomainName(cached), pod, ob)
		ob = nil
	}
	if ob == nil && s.StartTimestamp != nil {
		ob = c.recoverOutbound(key, cached, pod)
	}
	switch {
	case ob == nil && s.AbortRequested:
		return c.endMigration(ctx, key, cached, errors.New("aborted before the copy started"))
	case ob == nil:
		return c.startMigration(ctx, key, cached, pod)
	case ob.finished() && ob.err != nil && !c.domainStillHere(key, cached, pod):
		// libvirt's answer was lost (the source launcher exits as soon as its domain left,
		// which can cut the call short): the target's report decides. Its domain runs only
		// once the migration completed.
		if s.TargetNodeDomainDetected {
			return c.endMigration(ctx, key, cached, nil)
		}
		if wait := time.Until(ob.endedAt.Add(targetReportWait)); wait > 0 {
			c.queue.AddAfter(key, wait)
			return nil
		}
		return c.endMigration(ctx, key, cached, fmt.Errorf("%v; the domain left this node but the target never reported it", ob.err))
	case ob.finished():
		return c.endMigration(ctx, key, cached, ob.err)
	case s.AbortRequested:
		c.abort(key, DomainName(cached), pod, ob)
	}
	return nil
}

// recoverOutbound stands for a copy this handler started before it restarted: the call and
// the proxy died with the old process, so libvirt's job fails, and is aborted here in case it
// lingers. The copy is then decided as one whose answer was lost: by where the domain is.
func (c *Controller) recoverOutbound(key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod) *outbound {
	ob := &outbound{uid: vmi.Status.MigrationState.MigrationUID, done: make(chan struct{}),
		err: errors.New("virt-handler restarted while the migration ran"), endedAt: time.Now()}
	close(ob.done)
	if lv, ok := c.sourceLibvirt(key, vmi, pod); ok {
		err := lv.AbortJob(DomainName(vmi))
		klog.InfoS("aborted the migration job of the previous virt-handler", "vmi", key, "err", err)
	}
	c.outbound.set(key, ob)
	return ob
}

// startMigration opens the proxy out of the source pod, records the start, and runs the copy.
func (c *Controller) startMigration(ctx context.Context, key string, cached *v1.VirtualMachineInstance, pod *corev1.Pod) error {
	s := cached.Status.MigrationState
	if pod == nil || pod.Status.Phase != corev1.PodRunning {
		return c.endMigration(ctx, key, cached, errors.New("the source launcher pod is not running"))
	}
	proxy, err := c.sourceProxy(cached, pod)
	if err != nil {
		return c.endMigration(ctx, key, cached, err)
	}
	vmi := cached.DeepCopy()
	vmi.Status.MigrationState.StartTimestamp = ptr.To(metav1.NewTime(c.clock.Now()))
	if err := c.updateStatus(ctx, cached, vmi); err != nil {
		_ = proxy.Close()
		return err
	}
	ob := &outbound{uid: s.MigrationUID, proxy: proxy, done: make(chan struct{})}
	c.outbound.set(key, ob)
	params := MigrationParams{
		DestURI:   "qemu+unix:///session?socket=" + inPod(s.MigrationUID, libvirtProxy),
		MemoryURI: "unix://" + inPod(s.MigrationUID, memorySocket),
		DisksURI:  "unix://" + inPod(s.MigrationUID, disksSocket),
		Block:     cached.Status.MigrationMethod == v1.BlockMigration,
		Timeout:   migrationTimeout(cached),
	}
	params.BandwidthMiB, params.AutoConverge, params.Unsafe = migrationTuning(cached)
	privateDir := PrivateDir(c.opts.KubeletRoot, pod.UID)
	name := DomainName(cached)
	klog.InfoS("migrating", "vmi", key, "migration", s.MigrationUID, "to", s.TargetNode, "block", params.Block,
		"bandwidthMiB", params.BandwidthMiB, "autoConverge", params.AutoConverge, "unsafe", params.Unsafe, "timeout", params.Timeout)
	go func() {
		defer func() { ob.endedAt = time.Now(); close(ob.done); c.queue.Add(key) }()
		// A connection of its own: the call blocks for the whole copy.
		lv, err := c.opts.Dial(context.Background(), privateDir)
		if err != nil {
			ob.err = err
			return
		}
		defer func() { _ = lv.Close() }()
		ob.err = lv.MigrateDomain(name, params)
		if ob.err != nil {
			c.abort(key, name, pod, ob) // after a timeout libvirt's job may still run
		}
	}()
	return nil
}

// sourceProxy listens in the source pod for libvirt's and QEMU's connections to the target.
func (c *Controller) sourceProxy(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) (*migrationproxy.Source, error) {
	s := vmi.Status.MigrationState
	if c.opts.MigrationCerts == nil {
		return nil, errors.New("this virt-handler sends no migrations: it has no certificates")
	}
	material, err := c.opts.MigrationCerts(context.Background())
	if err != nil {
		return nil, fmt.Errorf("the handlers' certificates: %w", err)
	}
	cfg, err := handlerapi.PeerClientConfig(material)
	if err != nil {
		return nil, err
	}
	port := ""
	for p := range s.TargetDirectMigrationNodePorts {
		port = p
	}
	privateDir := PrivateDir(c.opts.KubeletRoot, pod.UID)
	listeners := map[string]net.Listener{}
	for ch, socket := range map[string]string{migrationproxy.Libvirt: libvirtProxy, migrationproxy.Memory: memorySocket, migrationproxy.Disks: disksSocket} {
		l, err := listenLauncherSocket(privateDir, path.Join(migrationRel(s.MigrationUID), socket))
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return nil, fmt.Errorf("listening in the source pod: %w", err)
		}
		listeners[ch] = l
	}
	return migrationproxy.NewSource(net.JoinHostPort(s.TargetNodeAddress, port), cfg, listeners)
}

// abort closes the migration's proxied connections (QEMU's NBD client waits forever on a
// stalled one) and has libvirt abort the job, again until the call returned: one abort does
// not end a job stuck copying disks.
func (c *Controller) abort(key, name string, pod *corev1.Pod, ob *outbound) {
	ob.abortMu.Do(func() {
		if ob.proxy != nil {
			_ = ob.proxy.Close()
		}
		if pod == nil {
			return
		}
		privateDir := PrivateDir(c.opts.KubeletRoot, pod.UID)
		go func() {
			for range 10 {
				if lv, err := c.opts.Dial(context.Background(), privateDir); err == nil {
					err = lv.AbortJob(name)
					_ = lv.Close()
					klog.InfoS("aborted the migration job", "vmi", key, "err", err)
				}
				select {
				case <-ob.done:
					return
				case <-time.After(2 * time.Second):
				}
			}
		}()
	})
}

// endMigration reports how the copy ended: the instance's state says completed, and failed
// with the reason unless the guest now runs on the target.
func (c *Controller) endMigration(ctx context.Context, key string, cached *v1.VirtualMachineInstance, cause error) error {
	vmi := cached.DeepCopy()
	s := vmi.Status.MigrationState
	s.Completed = true
	s.EndTimestamp = ptr.To(metav1.NewTime(c.clock.Now()))
	if cause != nil {
		s.Failed, s.FailureReason = true, cause.Error()
	}
	if s.AbortRequested {
		s.AbortStatus = v1.MigrationAbortSucceeded
		if cause == nil {
			s.AbortStatus = v1.MigrationAbortFailed // it had finished
		}
	}
	if err := c.updateStatus(ctx, cached, vmi); err != nil {
		return err
	}
	c.closeOutbound(key)
	if cause != nil {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonMigrationFailed, "Migration to %s failed: %v", s.TargetNode, cause)
	} else {
		c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonMigrated, "Migrated to node %s", s.TargetNode)
	}
	return nil
}
