package framework

import (
	"context"
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
func (f *Framework) RestartVirtHandler() {
	f.t.Helper()
	f.Kubectl("delete", "pods", "-n", ProjectNamespace, "-l", "kubevirt.io=virt-handler", "--wait")
	f.WaitDaemonSetReady(ProjectNamespace, "virt-handler", 2*time.Minute)
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
