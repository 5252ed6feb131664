//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// healthy says what is not (yet) as it should be, or nil when the whole workload runs: every
// VM whose strategy wants it running is Running and Ready on a usable node, the VMIRS has
// its replicas ready, the vmctl Deployment and DaemonSet have every pod ready with its clone
// running on the pod's node, and the project's own components are ready. lost is a node
// that is down (nothing may count as running there), or "".
func (c *chaos) healthy(ctx context.Context, lost string) error {
	virt := c.f.Virt.KubevirtV1()
	vms, err := virt.VirtualMachines(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	vmis, err := virt.VirtualMachineInstances(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	instance := map[string]*v1.VirtualMachineInstance{}
	for i := range vmis.Items {
		instance[vmis.Items[i].Name] = &vmis.Items[i]
	}
	running := 0
	for _, vm := range vms.Items {
		if vm.DeletionTimestamp != nil || !shouldRun(&vm) {
			continue
		}
		vmi := instance[vm.Name]
		switch {
		case vm.Status.PrintableStatus != v1.VirtualMachineStatusRunning || !vm.Status.Ready:
			return fmt.Errorf("VM %s is %s, ready=%v", vm.Name, vm.Status.PrintableStatus, vm.Status.Ready)
		case vmi == nil || vmi.Status.Phase != v1.Running:
			return fmt.Errorf("VM %s has no running instance", vm.Name)
		case vmi.Status.NodeName == lost:
			return fmt.Errorf("VM %s still counts as running on lost node %s", vm.Name, lost)
		}
		running++
	}
	// The three fixed VMs, one clone per Deployment pod and one per DaemonSet pod.
	if running < 3+vmctlSize+1 {
		return fmt.Errorf("only %d VMs running", running)
	}

	rsReady := 0
	for _, vmi := range vmis.Items {
		if vmi.Labels["app"] == vmirs && vmi.Status.Phase == v1.Running && vmi.Status.NodeName != lost && vmi.DeletionTimestamp == nil {
			rsReady++
		}
	}
	if rsReady != vmirsSize {
		return fmt.Errorf("VMIRS: %d of %d instances running", rsReady, vmirsSize)
	}

	deploy, err := c.f.Kube.AppsV1().Deployments(c.ns).Get(ctx, vmctlApp, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if deploy.Status.ReadyReplicas != vmctlSize || deploy.Status.Replicas != vmctlSize {
		return fmt.Errorf("vmctl Deployment: %d/%d ready", deploy.Status.ReadyReplicas, deploy.Status.Replicas)
	}
	if err := c.clonesRunning(ctx, "app="+vmctlApp, instance, lost); err != nil {
		return err
	}
	ds, err := c.f.Kube.AppsV1().DaemonSets(c.ns).Get(ctx, vmctlDS, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if err := dsReady(ds, len(c.nodes)-boolInt(lost != "")); err != nil {
		return fmt.Errorf("vmctl DaemonSet: %w", err)
	}
	if err := c.clonesRunning(ctx, "app="+vmctlDS, instance, lost); err != nil {
		return err
	}
	return c.componentsReady(ctx, lost)
}

// shouldRun says whether the VM's run strategy wants an instance now.
func shouldRun(vm *v1.VirtualMachine) bool {
	if vm.Spec.RunStrategy == nil {
		return vm.Spec.Running != nil && *vm.Spec.Running
	}
	s := *vm.Spec.RunStrategy
	return s == v1.RunStrategyAlways || s == v1.RunStrategyRerunOnFailure
}

// clonesRunning checks each live pod of selector runs, and its clone runs on the pod's node.
func (c *chaos) clonesRunning(ctx context.Context, selector string, instance map[string]*v1.VirtualMachineInstance, lost string) error {
	pods, err := c.f.LivePods(ctx, selector)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.Spec.NodeName == lost || pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s is %s on %s", pod.Name, pod.Status.Phase, pod.Spec.NodeName)
		}
		name := vmctl.CloneName(prototype, pod.Name)
		vmi := instance[name]
		if vmi == nil || vmi.Status.Phase != v1.Running || vmi.Status.NodeName != pod.Spec.NodeName {
			return fmt.Errorf("clone %s of pod %s (node %s) not running there", name, pod.Name, pod.Spec.NodeName)
		}
	}
	return nil
}

// dsReady checks a DaemonSet has a ready pod on each of want nodes.
func dsReady(ds *appsv1.DaemonSet, want int) error {
	s := ds.Status
	if s.ObservedGeneration < ds.Generation || s.DesiredNumberScheduled != int32(want) || s.NumberReady != s.DesiredNumberScheduled {
		return fmt.Errorf("%d of %d pods ready, want %d", s.NumberReady, s.DesiredNumberScheduled, want)
	}
	return nil
}

// componentsReady checks virt-controller, virt-api and virt-handler are ready (virt-handler
// on every node but the lost one).
func (c *chaos) componentsReady(ctx context.Context, lost string) error {
	apps := c.f.Kube.AppsV1().Deployments(framework.ProjectNamespace)
	for _, name := range []string{"virt-controller", "virt-api"} {
		d, err := apps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Replicas != nil && d.Status.ReadyReplicas < *d.Spec.Replicas {
			return fmt.Errorf("%s: %d ready", name, d.Status.ReadyReplicas)
		}
	}
	ds, err := c.f.Kube.AppsV1().DaemonSets(framework.ProjectNamespace).Get(ctx, "virt-handler", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if err := dsReady(ds, len(c.nodes)-boolInt(lost != "")); err != nil {
		return fmt.Errorf("virt-handler: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// poll calls fn every second until it returns nil, ctx ends or timeout passes; it returns
// fn's last error then.
func poll(ctx context.Context, timeout time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
		err := fn(callCtx)
		callCancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %w", timeout, err)
		case <-time.After(time.Second):
		}
	}
}

// waitRecovered waits until the fault was noticed and the workload is healthy, and stays so
// for the fault's settle time without any restart of the project's components; it returns
// when that last healthy streak began.
func (c *chaos) waitRecovered(ctx context.Context, fl fault, e effect) (time.Time, error) {
	var streak time.Time
	var restarts map[string]int32
	err := poll(ctx, faultDeadline+fl.settle, func(ctx context.Context) error {
		err := c.recovered(ctx, e)
		var now map[string]int32
		if err == nil {
			now, err = c.componentRestarts(ctx)
		}
		switch {
		case err != nil:
			streak = time.Time{}
			return err
		case streak.IsZero() || !maps.Equal(now, restarts):
			streak, restarts = time.Now(), now
		}
		if held := time.Since(streak); held < fl.settle {
			return fmt.Errorf("healthy for %s of %s", held.Round(time.Second), fl.settle)
		}
		return nil
	})
	return streak, err
}

func (c *chaos) recovered(ctx context.Context, e effect) error {
	if e.noticed != nil {
		if err := e.noticed(ctx); err != nil {
			return err
		}
	}
	return c.healthy(ctx, e.lost)
}

// componentRestarts is the restart count of every pod of the project's components, by name.
func (c *chaos) componentRestarts(ctx context.Context) (map[string]int32, error) {
	pods, err := c.f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, p := range pods.Items {
		out[p.Name] = restartCount(&p)
	}
	return out, nil
}

// restartsSince says which component pods restarted or are new since before, e.g.
// "virt-controller-5f7c-x2x +1": the faults' collateral damage, for the report.
func restartsSince(before, after map[string]int32) string {
	var out []string
	for name, n := range after {
		if b, ok := before[name]; !ok {
			out = append(out, name+" new")
		} else if n > b {
			out = append(out, fmt.Sprintf("%s +%d", name, n-b))
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
