package benchout

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// DeleteNamespace deletes a namespace and waits until it is gone, with its VMs and pods, so
// the next workload starts on a quiet cluster.
func DeleteNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	err := kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
