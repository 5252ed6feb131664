package examples

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
)

// ExamplesNamespace is where the examples are written to run: RoleBinding subjects name it.
const ExamplesNamespace = "default"

// Create creates example objects in namespace, as `kubectl apply -n namespace` would; the
// RoleBinding subjects naming the examples' namespace are moved along.
func Create(ctx context.Context, kube kubernetes.Interface, virt versioned.Interface, namespace string, objs ...runtime.Object) error {
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *v1.VirtualMachine:
			_, err = virt.KubevirtV1().VirtualMachines(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *v1.VirtualMachineInstance:
			_, err = virt.KubevirtV1().VirtualMachineInstances(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = kube.CoreV1().ServiceAccounts(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = kube.CoreV1().Services(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			_, err = kube.CoreV1().Secrets(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = kube.CoreV1().ConfigMaps(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim:
			_, err = kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = kube.RbacV1().Roles(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			for i := range o.Subjects {
				if o.Subjects[i].Namespace == ExamplesNamespace {
					o.Subjects[i].Namespace = namespace
				}
			}
			_, err = kube.RbacV1().RoleBindings(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			_, err = kube.AppsV1().Deployments(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.DaemonSet:
			_, err = kube.AppsV1().DaemonSets(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.StatefulSet:
			_, err = kube.AppsV1().StatefulSets(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.Job:
			_, err = kube.BatchV1().Jobs(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *policyv1.PodDisruptionBudget:
			_, err = kube.PolicyV1().PodDisruptionBudgets(namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("no create for %T", obj)
		}
		if err != nil {
			return fmt.Errorf("create %T: %w", obj, err)
		}
	}
	return nil
}
