package handler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/migrationproxy"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// migrationRel is the directory of one migration's sockets in both launcher pods: the source
// handler's proxy listens there in the source pod, the target QEMU in the target pod, at the
// same path (libvirt hands one URI to both sides). One directory per migration, so a pod that
// was a target before never finds a socket of its own there.
func migrationRel(uid types.UID) string { return path.Join("migration", string(uid)) }

// Sockets of a migration, in migrationRel.
const (
	memorySocket = "memory.sock"
	disksSocket  = "disks.sock"
	libvirtProxy = "libvirt.sock"
)

// inPod is a migration socket's path as the launcher pod's libvirt and QEMU see it.
func inPod(uid types.UID, socket string) string {
	return path.Join(layout.PrivateDir, migrationRel(uid), socket)
}

// inbound is the receiving end of a migration on this node.
type inbound struct {
	uid   types.UID
	proxy *migrationproxy.Target
}

// migrations are this node's migrations in or out, by instance key.
type migrations[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (ms *migrations[T]) get(key string) (T, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	v, ok := ms.m[key]
	return v, ok
}

func (ms *migrations[T]) set(key string, v T) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[string]T{}
	}
	ms.m[key] = v
}

// take removes and returns key's migration when keep says so.
func (ms *migrations[T]) take(key string, keep func(T) bool) (T, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	v, ok := ms.m[key]
	if !ok || keep(v) {
		var none T
		return none, false
	}
	delete(ms.m, key)
	return v, true
}

// closeInbound stops the proxy of key's migration in, unless it is migration keep's.
func (c *Controller) closeInbound(key string, keep types.UID) {
	if ib, ok := c.inbound.take(key, func(ib *inbound) bool { return ib.uid == keep }); ok {
		_ = ib.proxy.Close()
	}
}

// incoming is the instance of key when it migrates to this node.
func (c *Controller) incoming(key string) (*v1.VirtualMachineInstance, bool) {
	if c.targetLister == nil {
		return nil, false
	}
	namespace, name, _ := cache.SplitMetaNamespaceKey(key)
	vmi, err := c.targetLister.VirtualMachineInstances(namespace).Get(name)
	if err != nil {
		return nil, false
	}
	s := vmi.Status.MigrationState
	return vmi, s != nil && s.TargetNode == c.opts.NodeName && !s.Completed && vmi.DeletionTimestamp == nil
}

// syncTarget prepares this node's target pod of a migration, once it runs: the pod network
// and the instance's files as for a start (the domain arrives with the same paths), the
// migration's socket directory, and a proxy that takes the source handler's connections; then
// it says where that proxy listens. It also reports when the domain arrived and runs here.
func (c *Controller) syncTarget(ctx context.Context, key string, cached *v1.VirtualMachineInstance) error {
	s := cached.Status.MigrationState
	pod, err := c.targetPod(cached)
	if err != nil || pod == nil || pod.Status.Phase != corev1.PodRunning {
		return err // its next update queues the instance
	}
	privateDir := PrivateDir(c.opts.KubeletRoot, pod.UID)
	lv, err := c.conns.get(key, pod.UID, DomainName(cached), privateDir)
	if errors.Is(err, ErrSocketNotReady) {
		c.queue.AddAfter(key, c.waits.When(key))
		return nil
	}
	if err != nil {
		return err
	}
	if ib, ok := c.inbound.get(key); !ok || ib.uid != s.MigrationUID {
		if err := c.prepareTarget(key, cached, pod, lv, privateDir); err != nil {
			if errors.Is(err, errNetworkNotReady) || errors.Is(err, errHooksNotReady) {
				c.queue.AddAfter(key, c.waits.When(key))
				return nil
			}
			return err
		}
	}
	c.waits.Forget(key)
	vmi := cached.DeepCopy()
	state := vmi.Status.MigrationState
	if state.TargetNodeAddress == "" {
		ib, _ := c.inbound.get(key)
		port := ib.proxy.Port()
		state.TargetNodeAddress = c.opts.PodIP
		state.TargetDirectMigrationNodePorts = map[string]int{strconv.Itoa(port): 0}
	}
	arrived := false
	if st, err := lv.DomainState(DomainName(vmi)); err == nil && st.State == libvirt.DomainRunning && !state.TargetNodeDomainDetected {
		state.TargetNodeDomainDetected = true
		state.TargetNodeDomainReadyTimestamp = ptr.To(metav1.NewTime(c.clock.Now()))
		arrived = true
	}
	if err := c.updateStatus(ctx, cached, vmi); err != nil || !arrived {
		return err
	}
	go c.recordArrival(vmi, lv)
	return nil
}

// recordArrival tells, in an event on the instance, how long the migration that brought its
// domain here took and how long the guest was paused for it, as libvirt measured. libvirt
// has them a moment after the domain resumed: it asks a few times, off the sync worker.
func (c *Controller) recordArrival(vmi *v1.VirtualMachineInstance, lv Libvirt) {
	var stats MigrationStats
	var err error
	for range 20 {
		if stats, err = lv.CompletedMigration(DomainName(vmi)); err == nil {
			c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonMigrationReceived, MigrationReceivedFormat,
				vmi.Status.MigrationState.SourceNode, stats.Elapsed.Seconds(), stats.Downtime.Milliseconds(), float64(stats.Bytes)/(1<<20))
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	klog.InfoS("no statistics of the completed migration", "vmi", klog.KObj(vmi), "err", err)
}

// prepareTarget readies the target pod and starts the migration's proxy into it.
func (c *Controller) prepareTarget(key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod, lv Libvirt, privateDir string) error {
	if c.opts.PodIP == "" || c.opts.MigrationCerts == nil {
		return errors.New("this virt-handler takes no migrations: it has no pod IP or certificates")
	}
	if err := requirePodClaims(vmi, pod); err != nil {
		return err
	}
	root, err := os.OpenRoot(privateDir)
	if err != nil {
		return fmt.Errorf("the target pod's private directory: %w", err)
	}
	defer root.Close()
	if err := c.plumbNetwork(vmi, pod, lv, root); err != nil {
		return err
	}
	// The target's cloud-init disks go through the same hooks as the source's, so the guest
	// finds the same data after the move.
	sidecars, err := c.connectHooks(vmi, pod)
	if err != nil {
		return err
	}
	defer sidecars.close()
	if err := c.writeFiles(vmi, pod, root, nil, lv, sidecars); err != nil {
		return err
	}
	seedCapabilities(root, c.opts.Capabilities)
	uid := vmi.Status.MigrationState.MigrationUID
	if err := makeLauncherDir(privateDir, migrationRel(uid)); err != nil {
		return fmt.Errorf("the migration's directory: %w", err)
	}
	material, err := c.opts.MigrationCerts(context.Background())
	if err != nil {
		return fmt.Errorf("the handlers' certificates: %w", err)
	}
	cfg, err := handlerapi.PeerServerConfig(material)
	if err != nil {
		return err
	}
	dialIn := func(rel string) migrationproxy.Dial {
		return func(context.Context) (net.Conn, error) { return dialLauncherSocket(privateDir, rel) }
	}
	proxy, err := migrationproxy.NewTarget(net.JoinHostPort(c.opts.PodIP, "0"), cfg, map[string]migrationproxy.Dial{
		migrationproxy.Libvirt: dialIn(layout.SocketRel),
		migrationproxy.Memory:  dialIn(path.Join(migrationRel(uid), memorySocket)),
		migrationproxy.Disks:   dialIn(path.Join(migrationRel(uid), disksSocket)),
	})
	if err != nil {
		return err
	}
	c.closeInbound(key, "")
	c.inbound.set(key, &inbound{uid: uid, proxy: proxy})
	klog.InfoS("migration target ready", "vmi", key, "migration", uid, "pod", pod.Name, "port", proxy.Port())
	return nil
}

// targetPod is the migration's target pod on this node: the one its state names, labelled
// with the migration, claiming the instance.
func (c *Controller) targetPod(vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	s := vmi.Status.MigrationState
	pods, err := c.launchers.Claiming(vmi)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.Name == s.TargetPod && p.Spec.NodeName == c.opts.NodeName && p.Labels[v1.MigrationJobLabel] == string(s.MigrationUID) {
			return p, nil
		}
	}
	return nil, nil
}
