//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// Faults of the cluster itself. Its components are plain processes of this machine, started
// by hack/cluster; their pids are in _cluster/pids.

// componentPID is the pid of a cluster component, checked like hack/cluster/lib.sh's pid_of:
// the process's command line must still name this cluster's directory (pids get reused).
func (c *chaos) componentPID(name string) (int, error) {
	cluster := filepath.Join(c.root, "_cluster")
	data, err := os.ReadFile(filepath.Join(cluster, "pids", name+".pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, err
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !bytes.Contains(cmdline, []byte(cluster)) {
		return 0, fmt.Errorf("%s (pid %d) is not running", name, pid)
	}
	return pid, nil
}

// pauseAPIServer stops kube-apiserver for 20 s (SIGSTOP), then lets it go on (SIGCONT): a
// hung API server, whose connections stay open but answer nothing. Recovery counts from the
// SIGCONT.
func pauseAPIServer(ctx context.Context, c *chaos) (effect, error) {
	pid, err := c.componentPID("kube-apiserver")
	if err != nil {
		return effect{}, err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return effect{}, err
	}
	// Whatever happens, it runs again.
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		return effect{}, err
	}
	return effect{start: time.Now()}, nil
}

// restartEtcd stops etcd and starts it again exactly as make cluster-up does.
func restartEtcd(ctx context.Context, c *chaos) (effect, error) {
	start := time.Now()
	if out, err := c.clusterScript(ctx, "stop etcd; start_etcd"); err != nil {
		return effect{}, fmt.Errorf("restart etcd: %v\n%s", err, out)
	}
	return effect{start: start}, nil
}

// clusterScript runs bash with hack/cluster/lib.sh and components.sh sourced.
func (c *chaos) clusterScript(ctx context.Context, script string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c",
		"set -euo pipefail; source hack/cluster/lib.sh; source hack/cluster/components.sh; "+script)
	cmd.Dir = c.root
	return cmd.CombinedOutput()
}

// loseNode plays a power cut of the second node and the operator who answers it, the way
// Kubernetes documents non-graceful node shutdown: kill the node (hack/cluster/node.sh stop:
// its kubelet, containerd, kube-proxy and every process of its pods), wait until it is
// NotReady, then taint it out-of-service. Only that taint lets the pod garbage collector
// remove its pods, after which their VMs start on the other node; virt-controller never
// moves an instance off a merely silent node. restore starts the node again, removes the
// taint and waits until its virt-handler has marked it schedulable.
func loseNode(ctx context.Context, c *chaos) (effect, error) {
	node := c.lostNode
	if node == "" {
		return effect{}, errSkip
	}
	if out, err := c.nodeScript(ctx, "stop", node); err != nil {
		return effect{}, fmt.Errorf("node.sh stop %s: %v\n%s", node, err, out)
	}
	e := effect{start: time.Now(), lost: node}
	e.restore = func(ctx context.Context) error { return c.restoreNode(ctx, node) }
	err := poll(ctx, 3*time.Minute, func(ctx context.Context) error {
		n, err := c.f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if framework.NodeReady(n) {
			return fmt.Errorf("node %s still Ready", node)
		}
		return nil
	})
	if err != nil {
		return e, err
	}
	c.logf("%s NotReady after %s: tainting it %s", node, since(e.start), outOfService.ToString())
	return e, c.setOutOfService(ctx, node, true)
}

var outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

func (c *chaos) restoreNode(ctx context.Context, node string) error {
	if out, err := c.nodeScript(ctx, "start", node); err != nil {
		return fmt.Errorf("node.sh start %s: %v\n%s", node, err, out)
	}
	if err := c.setOutOfService(ctx, node, false); err != nil {
		return err
	}
	return poll(ctx, 5*time.Minute, func(ctx context.Context) error {
		n, err := c.f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !framework.NodeReady(n) || n.Labels[v1.SchedulableLabel] != "true" {
			return fmt.Errorf("node %s: ready=%v %s=%q", node, framework.NodeReady(n), v1.SchedulableLabel, n.Labels[v1.SchedulableLabel])
		}
		return nil
	})
}

func (c *chaos) nodeScript(ctx context.Context, verb, node string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, "hack", "cluster", "node.sh"), verb, node)
	cmd.Dir = c.root
	return cmd.CombinedOutput()
}

// setOutOfService adds or removes the out-of-service taint, retrying on conflicts.
func (c *chaos) setOutOfService(ctx context.Context, node string, on bool) error {
	return poll(ctx, time.Minute, func(ctx context.Context) error {
		n, err := c.f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != outOfService.Key {
				taints = append(taints, t)
			}
		}
		if on {
			taints = append(taints, outOfService)
		}
		n.Spec.Taints = taints
		_, err = c.f.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}
