package handler

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A guest's file systems are frozen through its agent for a backup tool that snapshots its
// disks (KubeVirt's freeze and unfreeze subresources). The handler remembers which guests it
// froze, reports them as status.fsFreezeStatus "frozen", and thaws each once its unfreeze
// timeout passes: a backup tool that dies between freeze and unfreeze must not leave the
// guest's applications stalled on their writes.

// adoptedUnfreezeTimeout is how long a guest stays frozen that the instance's status says is
// frozen but this handler did not freeze (it restarted, or the guest migrated here): its
// deadline went with the process that set it, so it gets KubeVirt's default (virt-freezer's).
const adoptedUnfreezeTimeout = 5 * time.Minute

// Event reason of a thaw the handler did itself.
const ReasonUnfrozenByTimeout = "UnfrozenByTimeout"

// freezes are the guests this handler froze or thawed, by instance key. A thaw is remembered
// until the status no longer says frozen, so that a status written before it is not taken for
// a freeze this handler does not know.
type freezes struct {
	mu sync.Mutex
	m  map[string]*freeze
}

// freeze is one guest: the launcher pod it runs in, whether it is frozen, and the timer that
// thaws it (nil: frozen until unfrozen). gen tells a timer of an earlier freeze from the
// current one.
type freeze struct {
	pod    types.UID
	frozen bool
	timer  *time.Timer
	gen    uint64
}

// record is key's entry for pod, a new one if it has none or one of another pod.
func (f *freezes) record(key string, pod types.UID) *freeze {
	if f.m == nil {
		f.m = map[string]*freeze{}
	}
	fr := f.m[key]
	if fr == nil || fr.pod != pod {
		if fr != nil && fr.timer != nil {
			fr.timer.Stop()
		}
		fr = &freeze{pod: pod}
		f.m[key] = fr
	}
	return fr
}

// set records key's guest in pod frozen, to be thawed by thaw(gen) after unfreezeAfter (never
// when 0). A freeze of a frozen guest only moves its deadline.
func (f *freezes) set(key string, pod types.UID, unfreezeAfter time.Duration, thaw func(gen uint64)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fr := f.record(key, pod)
	if fr.timer != nil {
		fr.timer.Stop()
	}
	fr.frozen, fr.timer = true, nil
	fr.gen++
	if unfreezeAfter > 0 {
		gen := fr.gen
		fr.timer = time.AfterFunc(unfreezeAfter, func() { thaw(gen) })
	}
}

// thawed records key's guest in pod thawed; with gen > 0 only if gen is still its freeze (a
// timer that a newer freeze overtook changes nothing).
func (f *freezes) thawed(key string, pod types.UID, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fr := f.m[key]; gen > 0 && (fr == nil || fr.gen != gen || fr.pod != pod) {
		return
	}
	fr := f.record(key, pod)
	if fr.timer != nil {
		fr.timer.Stop()
	}
	fr.frozen, fr.timer = false, nil
}

// state is what this handler knows of key's guest in pod: frozen, and whether it knows at all.
func (f *freezes) state(key string, pod types.UID) (frozen, known bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fr := f.m[key]
	if fr == nil || fr.pod != pod {
		return false, false
	}
	return fr.frozen, true
}

// current says whether gen is key's freeze still, and in force.
func (f *freezes) current(key string, gen uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fr := f.m[key]
	return fr != nil && fr.frozen && fr.gen == gen
}

// drop forgets key.
func (f *freezes) drop(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fr := f.m[key]; fr != nil && fr.timer != nil {
		fr.timer.Stop()
	}
	delete(f.m, key)
}

// freezeFilesystems freezes (or, with thaw, thaws) the guest's file systems through its
// agent; a freeze is remembered with its deadline. A thaw is always passed on to the agent,
// even of a guest this handler does not know frozen: another process may have frozen it.
func (c *Controller) freezeFilesystems(vmi *v1.VirtualMachineInstance, lv Libvirt, thaw bool, unfreezeAfter time.Duration) error {
	key := vmi.Namespace + "/" + vmi.Name
	pod, err := c.launcherPod(vmi)
	if err != nil || pod == nil {
		return &streamError{http.StatusConflict, "the instance's launcher pod is gone"}
	}
	if thaw {
		_, err = lv.ThawFilesystems(DomainName(vmi))
		if err = agentRefusal(err); err == nil {
			c.freezes.thawed(key, pod.UID, 0)
		}
		return err
	}
	if frozen, _ := c.freezes.state(key, pod.UID); !frozen {
		// The agent refuses to freeze twice; a second freeze only moves the deadline.
		if _, err := lv.FreezeFilesystems(DomainName(vmi)); err != nil {
			return agentRefusal(err)
		}
	}
	c.freezes.set(key, pod.UID, unfreezeAfter, func(gen uint64) { c.thawAfterTimeout(vmi.Namespace, vmi.Name, pod.UID, gen) })
	return nil
}

// thawAfterTimeout thaws a guest whose unfreeze timeout passed, on a connection of its own
// and off the sync workers. A launcher that does not answer leaves the guest as it is: the
// freeze is forgotten either way, and the instance's next status says so.
func (c *Controller) thawAfterTimeout(namespace, name string, pod types.UID, gen uint64) {
	key := namespace + "/" + name
	defer c.queue.Add(key)
	defer c.freezes.thawed(key, pod, gen)
	if !c.freezes.current(key, gen) {
		return // unfrozen, or frozen again with a new deadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), handlerCallBound)
	defer cancel()
	vmi, lv, err := c.dialRunning(ctx, namespace, name)
	if err != nil {
		klog.InfoS("not thawing the guest after its unfreeze timeout", "vmi", key, "err", err)
		return
	}
	defer func() { go closeQuietly(lv) }()
	if _, err := lv.ThawFilesystems(DomainName(vmi)); err != nil {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonUnfrozenByTimeout, "The unfreeze timeout passed, but thawing the guest's file systems failed: %v", err)
		return
	}
	c.recorder.Event(vmi, corev1.EventTypeNormal, ReasonUnfrozenByTimeout, "The unfreeze timeout passed: the guest's file systems were thawed")
}

// handlerCallBound bounds a thaw the handler starts itself: a dial and a call.
const handlerCallBound = 30 * time.Second

// fsFreezeStatus is what the status says of key's guest in pod, running with agent: frozen
// while this handler knows it frozen. A frozen status it knows nothing of (it restarted, or the
// guest migrated here) is taken over with adoptedUnfreezeTimeout; an agent that went (the
// guest rebooted) ends the freeze.
func (c *Controller) fsFreezeStatus(cached *v1.VirtualMachineInstance, pod types.UID, agent AgentView) string {
	key := cached.Namespace + "/" + cached.Name
	if agent.Known && !agent.Connected {
		c.freezes.thawed(key, pod, 0)
	}
	frozen, known := c.freezes.state(key, pod)
	switch {
	case frozen:
		return v1.FSFrozen
	case known && cached.Status.FSFreezeStatus != v1.FSFrozen:
		c.freezes.drop(key) // the thaw is in the status: nothing left to tell apart
	case !known && cached.Status.FSFreezeStatus == v1.FSFrozen:
		c.freezes.set(key, pod, adoptedUnfreezeTimeout, func(gen uint64) { c.thawAfterTimeout(cached.Namespace, cached.Name, pod, gen) })
		return v1.FSFrozen
	}
	return ""
}

// agentRefusal is err of a call to the guest agent as the handler answers it: 409 when the
// agent is not connected or does not answer.
func agentRefusal(err error) error {
	var lerr libvirt.Error
	if errors.As(err, &lerr) && (lerr.Code == uint32(libvirt.ErrAgentUnresponsive) || lerr.Code == uint32(libvirt.ErrAgentCommandTimeout)) {
		return &streamError{http.StatusConflict, "the guest agent is not connected or does not answer: " + lerr.Message}
	}
	return err
}
