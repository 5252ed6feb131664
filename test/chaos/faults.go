//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/manager"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// A fault hits one thing, once. It returns when the fault is in place (a pause: when it is
// over again) with what the suite needs to judge the recovery.
type fault struct {
	name   string
	short  bool // part of the CI subset (CHAOS_SHORT=1)
	inject func(ctx context.Context, c *chaos) (effect, error)
	// settle is how long everything must stay healthy, no component restarting, for the
	// recovery to count. Faults of the control plane show late: virt-controller gives its
	// Lease up only when its renewal times out, up to ~40 s after the API server came back.
	settle time.Duration
}

type effect struct {
	start   time.Time                       // recovery time counts from here
	noticed func(ctx context.Context) error // nil once the system has reacted (nil: no such step)
	lost    string                          // a node that stays down until restore
	restore func(ctx context.Context) error // brings it back; always called
}

var faults = []fault{
	{"kill -9 virt-controller", false, killVirtController, 15 * time.Second},
	{"kill -9 virt-handler", true, killVirtHandler, 15 * time.Second},
	{"kill -9 virt-api", false, killVirtAPI, 15 * time.Second},
	{"kill -9 libvirtd", false, killLibvirtd, 15 * time.Second},
	{"kill -9 qemu", true, killQEMU, 15 * time.Second},
	{"kube-apiserver paused 20s", false, pauseAPIServer, time.Minute},
	{"etcd restarted", false, restartEtcd, time.Minute},
	{"node lost and back", true, loseNode, 15 * time.Second},
}

// killInPod kills -9 the process of comm running in pod (by its cgroup, which names the
// pod's UID) and returns when the pod's container has restarted and is ready again.
func (c *chaos) killInPod(ctx context.Context, pod *corev1.Pod, comm string) (effect, error) {
	uid := string(pod.UID)
	p, err := findOne(comm, func(p proc) bool { return inPodCgroup(p.pid, uid) })
	if err != nil {
		return effect{}, fmt.Errorf("pod %s: %w", pod.Name, err)
	}
	restarts := restartCount(pod)
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return effect{}, err
	}
	e := effect{start: time.Now()}
	e.noticed = func(ctx context.Context) error {
		got, err := c.f.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.UID != pod.UID || restartCount(got) <= restarts || !framework.PodReady(got) {
			return fmt.Errorf("%s in pod %s not restarted and ready yet", comm, pod.Name)
		}
		return nil
	}
	return e, nil
}

// inPodCgroup says whether the process is in the cgroup of the pod with that UID (systemd
// cgroup names write its dashes as underscores).
func inPodCgroup(pid int, uid string) bool {
	data, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "cgroup"))
	if err != nil {
		return false
	}
	s := string(data)
	return strings.Contains(s, uid) || strings.Contains(s, strings.ReplaceAll(uid, "-", "_"))
}

func restartCount(pod *corev1.Pod) int32 {
	var n int32
	for _, cs := range pod.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// componentPod is the project's pod of that app label, on node when node is not "".
func (c *chaos) componentPod(ctx context.Context, app, node string) (*corev1.Pod, error) {
	pods, err := c.f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(ctx, metav1.ListOptions{LabelSelector: v1.AppLabel + "=" + app})
	if err != nil {
		return nil, err
	}
	for i, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && (node == "" || p.Spec.NodeName == node) {
			return &pods.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no running %s pod (node %q)", app, node)
}

// killVirtController kills the elected virt-controller: the Lease holder's process.
func killVirtController(ctx context.Context, c *chaos) (effect, error) {
	lease, err := c.f.Kube.CoordinationV1().Leases(framework.ProjectNamespace).Get(ctx, manager.LeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return effect{}, fmt.Errorf("leader Lease: %v", err)
	}
	pod, err := c.f.Kube.CoreV1().Pods(framework.ProjectNamespace).Get(ctx, *lease.Spec.HolderIdentity, metav1.GetOptions{})
	if err != nil {
		return effect{}, fmt.Errorf("leader pod: %w", err)
	}
	return c.killInPod(ctx, pod, "virt-controller")
}

// killVirtHandler kills the virt-handler of the node the Always VM runs on.
func killVirtHandler(ctx context.Context, c *chaos) (effect, error) {
	vmi, err := c.f.Virt.KubevirtV1().VirtualMachineInstances(c.ns).Get(ctx, vmAlways, metav1.GetOptions{})
	if err != nil {
		return effect{}, err
	}
	pod, err := c.componentPod(ctx, "virt-handler", vmi.Status.NodeName)
	if err != nil {
		return effect{}, err
	}
	return c.killInPod(ctx, pod, "virt-handler")
}

func killVirtAPI(ctx context.Context, c *chaos) (effect, error) {
	pod, err := c.componentPod(ctx, "virt-api", "")
	if err != nil {
		return effect{}, err
	}
	e, err := c.killInPod(ctx, pod, "virt-api")
	if err != nil {
		return e, err
	}
	// Back means its webhooks answer again: a dry-run create goes through them.
	restarted := e.noticed
	e.noticed = func(ctx context.Context) error {
		if err := restarted(ctx); err != nil {
			return err
		}
		_, err := c.f.Virt.KubevirtV1().VirtualMachines(c.ns).Create(ctx, framework.TestGuestVM("dry-run", v1.RunStrategyHalted),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	return e, nil
}

// killLibvirtd kills the libvirt daemon of the Always VM's launcher pod. The launcher lives
// only as long as its daemon, so the instance fails and the VM starts a new one.
func killLibvirtd(ctx context.Context, c *chaos) (effect, error) {
	vmi, err := c.f.Virt.KubevirtV1().VirtualMachineInstances(c.ns).Get(ctx, vmAlways, metav1.GetOptions{})
	if err != nil {
		return effect{}, err
	}
	pods, err := c.f.Kube.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
	if err != nil || len(pods.Items) != 1 {
		return effect{}, fmt.Errorf("launcher pod of %s: %d pods, %v", vmAlways, len(pods.Items), err)
	}
	uid := string(pods.Items[0].UID)
	p, err := findOne("libvirtd", func(p proc) bool { return inPodCgroup(p.pid, uid) })
	if err != nil {
		return effect{}, err
	}
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return effect{}, err
	}
	return effect{start: time.Now(), noticed: c.newInstance(vmAlways, vmi.UID)}, nil
}

// killQEMU kills the RerunOnFailure VM's guest: a crash, which that strategy reruns.
func killQEMU(ctx context.Context, c *chaos) (effect, error) {
	vmi, err := c.f.Virt.KubevirtV1().VirtualMachineInstances(c.ns).Get(ctx, vmRerun, metav1.GetOptions{})
	if err != nil {
		return effect{}, err
	}
	domain := c.ns + "_" + vmRerun
	p, err := findOne(qemuComm, func(p proc) bool { return p.domain() == domain })
	if err != nil {
		return effect{}, err
	}
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return effect{}, err
	}
	return effect{start: time.Now(), noticed: c.newInstance(vmRerun, vmi.UID)}, nil
}

// newInstance is nil once the VM runs an instance other than old.
func (c *chaos) newInstance(vm string, old any) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		vmi, err := c.f.Virt.KubevirtV1().VirtualMachineInstances(c.ns).Get(ctx, vm, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(vmi.UID) == fmt.Sprint(old) || vmi.Status.Phase != v1.Running {
			return fmt.Errorf("VM %s: no new running instance yet", vm)
		}
		return nil
	}
}
