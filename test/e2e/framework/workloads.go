package framework

import (
	"context"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitDeploymentReady waits until every replica of a Deployment is updated and ready.
func (f *Framework) WaitDeploymentReady(namespace, name string, timeout time.Duration) *appsv1.Deployment {
	f.t.Helper()
	var d *appsv1.Deployment
	f.Eventually(timeout, "deployment "+namespace+"/"+name+" ready", func(ctx context.Context) (bool, error) {
		var err error
		d, err = f.Kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.ReadyReplicas == want, nil
	})
	return d
}

// WaitDaemonSetReady waits until a DaemonSet runs a ready pod on every node it targets.
func (f *Framework) WaitDaemonSetReady(namespace, name string, timeout time.Duration) {
	f.t.Helper()
	f.Eventually(timeout, "daemonset "+namespace+"/"+name+" ready", func(ctx context.Context) (bool, error) {
		ds, err := f.Kube.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := ds.Status
		return s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled > 0 && s.NumberReady == s.DesiredNumberScheduled, nil
	})
}

// RestartVirtHandler deletes the virt-handler pods and waits for their replacements to be
// ready: a handler that starts afresh and dials every launcher of its node again.
// The DaemonSet's status may still count the old pods right after they went, so it waits
// for pods of other names, ready, on every node the DaemonSet targets.
func (f *Framework) RestartVirtHandler() {
	f.t.Helper()
	const selector = "kubevirt.io=virt-handler"
	old := map[string]bool{}
	for _, name := range strings.Fields(f.Kubectl("get", "pods", "-n", ProjectNamespace, "-l", selector, "-o", "name")) {
		old[strings.TrimPrefix(name, "pod/")] = true
	}
	f.Kubectl("delete", "pods", "-n", ProjectNamespace, "-l", selector, "--wait")
	f.Eventually(2*time.Minute, "new virt-handler pods ready on every node", func(ctx context.Context) (bool, error) {
		ds, err := f.Kube.AppsV1().DaemonSets(ProjectNamespace).Get(ctx, "virt-handler", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := f.Kube.CoreV1().Pods(ProjectNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods.Items {
			if !old[p.Name] && p.DeletionTimestamp == nil && PodReady(&p) {
				ready++
			}
		}
		return ds.Status.DesiredNumberScheduled > 0 && int32(ready) == ds.Status.DesiredNumberScheduled, nil
	})
}

// PodReady reports whether the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// CreateQuota creates a ResourceQuota in the test's namespace and waits until the quota
// controller has computed its status: until then the quota refuses every pod.
func (f *Framework) CreateQuota(name string, hard corev1.ResourceList) {
	f.t.Helper()
	quotas := f.Kube.CoreV1().ResourceQuotas(f.Namespace)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := quotas.Create(f.Context(), quota, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create quota %s: %v", name, err)
	}
	f.Eventually(time.Minute, "quota "+name+"'s status", func(ctx context.Context) (bool, error) {
		q, err := quotas.Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(q.Status.Hard) == len(hard), err
	})
}
