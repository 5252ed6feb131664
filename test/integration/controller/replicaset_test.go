package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// createReplicaSet creates a VMIRS of the minimal instance, selecting on its own label.
func createReplicaSet(t *testing.T, ns, name string, replicas int32) *v1.VirtualMachineInstanceReplicaSet {
	t.Helper()
	selector := map[string]string{"vmirs": name}
	rs := &v1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: &v1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector}, Spec: vmiSpec()},
		},
	}
	created, err := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Create(t.Context(), rs, metav1.CreateOptions{})
	must(t, err)
	return created
}

// replicaInstances lists the replica set's instances from the API server, terminating ones
// included, failing when one is not named <rs>-<random> or not controlled by the set.
func replicaInstances(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet) ([]v1.VirtualMachineInstance, error) {
	list, err := virt.KubevirtV1().VirtualMachineInstances(rs.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set(rs.Spec.Selector.MatchLabels).String()})
	if err != nil {
		return nil, err
	}
	for _, vmi := range list.Items {
		if !strings.HasPrefix(vmi.Name, rs.Name+"-") || len(vmi.Name) <= len(rs.Name)+1 {
			return nil, fmt.Errorf("instance %s is not named %s-<random>", vmi.Name, rs.Name)
		}
		if ref := metav1.GetControllerOf(&vmi); ref == nil || ref.UID != rs.UID {
			return nil, fmt.Errorf("instance %s is controlled by %+v, not the replica set", vmi.Name, ref)
		}
	}
	return list.Items, nil
}

// settled is a condition for eventually: exactly n instances exist (none terminating), all
// Running, and the replica set's status, written by the controller, counts n replicas, n of
// them ready.
func settled(rs *v1.VirtualMachineInstanceReplicaSet, n int32) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vmis, err := replicaInstances(ctx, rs)
		if err != nil {
			return false, err
		}
		var states []string
		running := int32(0)
		for _, vmi := range vmis {
			states = append(states, fmt.Sprintf("%s %s deleting=%v", vmi.Name, vmi.Status.Phase, vmi.DeletionTimestamp != nil))
			if vmi.Status.Phase == v1.Running && vmi.DeletionTimestamp == nil {
				running++
			}
		}
		if int32(len(vmis)) != n || running != n {
			return false, fmt.Errorf("%d instances, %d running: %v", len(vmis), running, states)
		}
		got, err := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Replicas != n || got.Status.ReadyReplicas != n || got.Status.LabelSelector == "" {
			// An empty labelSelector: the controller has not written any status yet.
			return false, fmt.Errorf("status replicas=%d ready=%d labelSelector=%q", got.Status.Replicas, got.Status.ReadyReplicas, got.Status.LabelSelector)
		}
		return true, nil
	}
}

// TestReplicaSetScale scales a VMIRS through its scale subresource, as `kubectl scale` and an
// HPA do, and checks instances and status at each step.
func TestReplicaSetScale(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	rs := createReplicaSet(t, ns, "scaled", 0)
	eventually(t, timeout, "no replicas", settled(rs, 0))
	sets := virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns)

	for _, n := range []int32{5, 2, 0} {
		scale, err := sets.GetScale(t.Context(), rs.Name, metav1.GetOptions{})
		must(t, err)
		scale.Spec.Replicas = n
		_, err = sets.UpdateScale(t.Context(), rs.Name, scale, metav1.UpdateOptions{})
		must(t, err)
		eventually(t, timeout, fmt.Sprintf("%d replicas running and ready", n), settled(rs, n))

		scale, err = sets.GetScale(t.Context(), rs.Name, metav1.GetOptions{})
		must(t, err)
		want := labels.Set(rs.Spec.Selector.MatchLabels).String()
		if scale.Spec.Replicas != n || scale.Status.Replicas != n || scale.Status.Selector != want {
			t.Errorf("scale after scaling to %d: spec %d, status %d, selector %q (want %q)",
				n, scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector, want)
		}
	}
}

// TestReplicaSetReplacesAndCascades: a crashed replica is deleted and replaced by a new one;
// deleting the replica set takes its instances and their launcher pods with it.
func TestReplicaSetReplacesAndCascades(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	rs := createReplicaSet(t, ns, "healing", 2)
	eventually(t, timeout, "2 replicas running and ready", settled(rs, 2))
	before, err := replicaInstances(t.Context(), rs)
	must(t, err)
	crashed := before[0]

	must(t, node.Crash(t.Context(), ns, crashed.Name))
	eventually(t, timeout, "the crashed replica replaced", func(ctx context.Context) (bool, error) {
		if ok, err := settled(rs, 2)(ctx); !ok {
			return false, err
		}
		vmis, err := replicaInstances(ctx, rs)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(vmis, func(vmi v1.VirtualMachineInstance) bool { return vmi.UID == crashed.UID }) {
			return false, fmt.Errorf("crashed replica %s still there", crashed.Name)
		}
		if !slices.ContainsFunc(vmis, func(vmi v1.VirtualMachineInstance) bool { return vmi.UID == before[1].UID }) {
			return false, fmt.Errorf("healthy replica %s went too", before[1].Name)
		}
		return true, nil
	})

	must(t, virt.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Delete(t.Context(), rs.Name, metav1.DeleteOptions{}))
	eventually(t, timeout, "the replica set's instances to be gone", func(ctx context.Context) (bool, error) {
		list, err := virt.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			return false, fmt.Errorf("%d instances left", len(list.Items))
		}
		return true, nil
	})
	eventually(t, timeout, "their launcher pods to be gone", func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{v1.AppLabel: v1.LauncherApp}.String()})
		if err != nil {
			return false, err
		}
		if len(pods.Items) > 0 {
			return false, fmt.Errorf("%s", describePods(pods.Items))
		}
		return true, nil
	})
}
