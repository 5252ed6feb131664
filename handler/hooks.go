package handler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// The hook sidecars (hooks.kubevirt.io/hookSidecars) rewrite the domain before it is defined,
// and the cloud-init data before its disk is written, as KubeVirt's OnDefineDomain and
// PreCloudInitIso hook points. They run user code in the launcher pod, so their
// work is bounded: all calls of one start share hooksTimeout, each at most hookCallTimeout,
// whatever the number of sidecars or of sockets they make (at most maxHookSockets are
// looked at); a sidecar that never makes its socket fails its instance after
// hookSocketTimeout, counted from the compute container's start (which follows the native
// sidecars' start), so a crash-looping sidecar fails it too. A sidecar can hold one sync of
// its own instance, never the handler.
const (
	hooksTimeout      = 30 * time.Second
	hookCallTimeout   = 10 * time.Second
	hookSocketTimeout = time.Minute
	maxHookSockets    = 64
)

// errHooksNotReady means a hook sidecar has not made its socket yet: the domain waits.
var errHooksNotReady = errors.New("the hook sidecars are not serving yet")

// hookSidecar is one sidecar that answered, with what it said of itself.
type hookSidecar struct {
	info   *hooks.Info
	client *hooks.Client
}

// hookCalls are the hook sidecars of one start, sharing its time; nil when the instance asks
// for none, which passes everything through unchanged.
type hookCalls struct {
	ctx      context.Context
	cancel   context.CancelFunc
	sidecars []hookSidecar
	vmiJSON  []byte
}

// connectHooks reaches every hook sidecar the instance asks for. Close what it returns.
func (c *Controller) connectHooks(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) (*hookCalls, error) {
	want, err := hooks.Sidecars(vmi.Annotations)
	if err != nil {
		return nil, invalidSpec("metadata.annotations[%s]: %v", hooks.SidecarsAnnotation, err)
	}
	if len(want) == 0 {
		return nil, nil
	}
	h := &hookCalls{}
	h.ctx, h.cancel = context.WithTimeout(context.Background(), hooksTimeout)
	dir := podVolumeDir(c.opts.KubeletRoot, pod.UID, "kubernetes.io~empty-dir", hooks.SocketsVolume)
	h.sidecars, err = collectSidecars(h.ctx, dir)
	if err == nil && len(h.sidecars) < len(want) {
		err = errHooksNotReady
		if started, ok := computeStarted(pod); ok && c.clock.Since(started) > hookSocketTimeout {
			err = invalidSpec("hook sidecars: %d of %d serve the hook protocol in %s %s after the pod started (%s)",
				len(h.sidecars), len(want), hooks.SocketsDir, hookSocketTimeout, hookStates(pod, len(want)))
		}
	}
	if err == nil {
		h.vmiJSON, err = instanceJSON(vmi)
	}
	if err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

func (h *hookCalls) close() {
	if h == nil {
		return
	}
	for _, s := range h.sidecars {
		_ = s.client.Close()
	}
	h.cancel()
}

// onDefineDomain passes the domain named name through each hook sidecar subscribed to
// OnDefineDomain, highest priority first (then by name, as KubeVirt), and returns the domain
// to define; the parsed domain is nil when no sidecar rewrote it.
func (h *hookCalls) onDefineDomain(name string, domXML []byte) ([]byte, *libvirtxml.Domain, error) {
	if h == nil {
		return domXML, nil, nil
	}
	var dom *libvirtxml.Domain
	for _, s := range subscribed(h.sidecars, hooks.OnDefineDomain) {
		call, cancel := context.WithTimeout(h.ctx, hookCallTimeout)
		out, err := s.client.OnDefineDomain(call, hooks.Version(s.info), domXML, h.vmiJSON)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("hook sidecar %q (OnDefineDomain): %w", s.info.Name, err)
		}
		var d libvirtxml.Domain
		if err := d.Unmarshal(string(out)); err != nil {
			return nil, nil, invalidSpec("hook sidecar %q returned a domain that does not parse: %v", s.info.Name, err)
		}
		if d.Name != name {
			return nil, nil, invalidSpec("hook sidecar %q renamed the domain %q to %q", s.info.Name, name, d.Name)
		}
		domXML, dom = out, &d
	}
	return domXML, dom, nil
}

// preCloudInitIso passes a cloud-init volume's data through each hook sidecar subscribed to
// PreCloudInitIso, in the same order, as KubeVirt's CloudInitData, and returns the data to
// write.
func (h *hookCalls) preCloudInitIso(src cloudInitSource, volume string, d CloudInitData) (CloudInitData, error) {
	if h == nil {
		return d, nil
	}
	for _, s := range subscribed(h.sidecars, hooks.PreCloudInitIso) {
		if hooks.Version(s.info) == "v1alpha1" {
			continue // that version has no PreCloudInitIso to call, as in KubeVirt
		}
		in, err := json.Marshal(toKubeVirtCloudInit(src, volume, d))
		if err != nil {
			return d, err
		}
		call, cancel := context.WithTimeout(h.ctx, hookCallTimeout)
		out, err := s.client.PreCloudInitIso(call, hooks.Version(s.info), in, h.vmiJSON)
		cancel()
		if err != nil {
			return d, fmt.Errorf("hook sidecar %q (PreCloudInitIso): %w", s.info.Name, err)
		}
		if d, err = fromKubeVirtCloudInit(src, d, out); err != nil {
			return d, invalidSpec("hook sidecar %q (PreCloudInitIso): %v", s.info.Name, err)
		}
	}
	return d, nil
}

// collectSidecars asks each socket in dir what it is. A socket nobody listens on (a restarted
// sidecar's old one) is skipped; one whose sidecar speaks no version this side knows fails.
func collectSidecars(ctx context.Context, dir string) ([]hookSidecar, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, errHooksNotReady // the kubelet has not set the volume up
	}
	var out []hookSidecar
	for i, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		if i >= maxHookSockets || ctx.Err() != nil {
			return out, fmt.Errorf("hook sidecars: %d answered within %s in %s, which holds %d files", len(out), hooksTimeout, hooks.SocketsDir, len(entries))
		}
		socket := e.Name()
		client, err := hooks.NewClient(func(context.Context) (net.Conn, error) { return dialLauncherSocket(dir, socket) })
		if err != nil {
			return out, err
		}
		call, cancel := context.WithTimeout(ctx, hookCallTimeout)
		info, err := client.Info(call)
		cancel()
		if err != nil {
			_ = client.Close()
			continue
		}
		if hooks.Version(info) == "" {
			_ = client.Close()
			return out, invalidSpec("hook sidecar %q speaks hook versions %v; this platform speaks %s", info.Name, info.Versions, strings.Join(hooks.Versions, ", "))
		}
		out = append(out, hookSidecar{info: info, client: client})
	}
	return out, nil
}

// subscribed are the sidecars that want point, in KubeVirt's order: priority, then name.
func subscribed(sidecars []hookSidecar, point string) []hookSidecar {
	var out []hookSidecar
	for _, s := range sidecars {
		if _, ok := hooks.Subscribes(s.info, point); ok {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b hookSidecar) int {
		pa, _ := hooks.Subscribes(a.info, point)
		pb, _ := hooks.Subscribes(b.info, point)
		return cmp.Or(cmp.Compare(pb, pa), strings.Compare(a.info.Name, b.info.Name))
	})
	return out
}

// computeStarted is when the pod's main container started: its native sidecars, the hook
// sidecars among them, had started before.
func computeStarted(pod *corev1.Pod) (time.Time, bool) {
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Running != nil {
			return st.State.Running.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}

// hookStates says which of the pod's n hook sidecar containers do not run, and why.
func hookStates(pod *corev1.Pod, n int) string {
	var out []string
	for i := range n {
		name := hooks.ContainerName(i)
		idx := slices.IndexFunc(pod.Status.InitContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == name })
		switch {
		case idx < 0:
			out = append(out, name+": no status")
		case pod.Status.InitContainerStatuses[idx].State.Waiting != nil:
			out = append(out, name+": "+pod.Status.InitContainerStatuses[idx].State.Waiting.Reason)
		case pod.Status.InitContainerStatuses[idx].State.Terminated != nil:
			out = append(out, name+": "+pod.Status.InitContainerStatuses[idx].State.Terminated.Reason)
		}
	}
	if len(out) == 0 {
		return "all running"
	}
	return strings.Join(out, ", ")
}

// instanceJSON is the instance as the hooks get it: a whole object, with its kind.
func instanceJSON(vmi *v1.VirtualMachineInstance) ([]byte, error) {
	obj := vmi.DeepCopy()
	obj.APIVersion, obj.Kind = v1.SchemeGroupVersion.String(), "VirtualMachineInstance"
	return json.Marshal(obj)
}
