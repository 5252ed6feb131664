//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestTheConsoleReachesOnlyTheInstancesOwnLauncher: a pod a tenant planted with the
// instance's labels and owner reference, running before the instance's own launcher, is never
// its launcher nor the console's target: `virtctl console` reaches the real guest's tty.
func TestTheConsoleReachesOnlyTheInstancesOwnLauncher(t *testing.T) {
	f := framework.New(t)
	// The instance waits for a node label, so the decoy surely runs first.
	const gate = "vmctl.io/e2e-console"
	spec := framework.TestGuestSpec("guarded")
	spec.NodeSelector = map[string]string{gate: f.Namespace}
	vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(),
		&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "guarded"}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	decoy := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "decoy",
			Labels:          map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: string(vmi.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "compute", Image: "vmctl/hello:devel", ImagePullPolicy: corev1.PullIfNotPresent, SecurityContext: framework.Restricted(),
		}}},
	}
	decoy.OwnerReferences[0].BlockOwnerDeletion = nil // a tenant may not set it on an instance
	if decoy, err = f.Kube.CoreV1().Pods(f.Namespace).Create(f.Context(), decoy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually(time.Minute, "the decoy to run", func(ctx context.Context) (bool, error) {
		p, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, decoy.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})

	handlers, err := f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(f.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io=virt-handler"})
	if err != nil || len(handlers.Items) == 0 {
		t.Fatalf("virt-handler pods: %v", err)
	}
	node := handlers.Items[0].Spec.NodeName
	f.Kubectl("label", "node", node, gate+"="+f.Namespace)
	t.Cleanup(func() { f.Kubectl("label", "node", node, gate+"-") })

	running := f.WaitVMIPhase("guarded", v1.Running, bootTimeout)
	console := f.StartConsole("guarded")
	// The guest's tty echoes what it receives: the words come back only from its serial port.
	const words = "vmctl-echo-check"
	f.Eventually(time.Minute, "virtctl console to echo what it sends", func(context.Context) (bool, error) {
		if err := console.Send(words + "\r"); err != nil {
			return false, err
		}
		time.Sleep(time.Second)
		return strings.Contains(console.Output(), words), nil
	})
	if _, listed := running.Status.ActivePods[decoy.UID]; listed || len(running.Status.ActivePods) != 1 {
		t.Errorf("activePods %v lists the decoy %s", running.Status.ActivePods, decoy.UID)
	}
}
