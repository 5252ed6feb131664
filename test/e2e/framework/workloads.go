package framework

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
