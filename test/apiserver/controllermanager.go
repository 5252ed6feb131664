package apiserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ControllerManagerControllers are the only kube-controller-manager controllers integration
// tests run: the garbage collector, so that ownerReferences cascade (background and foreground
// deletion, orphaning); namespace deletion, so that a test's namespace really goes away; and
// the service account controller, whose "default" ServiceAccount in every namespace the
// ServiceAccount admission plugin requires before it admits any pod. There is no kubelet,
// scheduler or node lifecycle in this environment.
var ControllerManagerControllers = []string{"garbage-collector-controller", "namespace-controller", "serviceaccount-controller"}

// controllerManagerReadyTimeout bounds the wait until the garbage collector has synced its
// monitors of every resource and collects.
const controllerManagerReadyTimeout = 120 * time.Second

// StartControllerManager runs the pinned kube-controller-manager against the server with only
// ControllerManagerControllers, logging to <dir>/kube-controller-manager.log (see LogTail), and
// returns once the service account controller and the garbage collector are seen to work. Stop
// ends it with the other processes.
//
// Call it after InstallCRDs: the garbage collector finds the resources it watches by discovery,
// and picks up resources added later only on its periodic resync (30 s), so owners and
// dependents of CRDs installed after it started cascade late.
func (s *Server) StartControllerManager() error {
	if s.Config == nil || s.Kubeconfig == "" {
		return fmt.Errorf("kube-controller-manager: the API server is not running")
	}
	if err := s.run("kube-controller-manager",
		"--kubeconfig="+s.Kubeconfig,
		"--controllers="+strings.Join(ControllerManagerControllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		// No HTTPS endpoint: readiness is proven below by the controllers' own work.
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
		"--kube-api-qps=100", "--kube-api-burst=200",
		"--v=1",
	); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), controllerManagerReadyTimeout)
	defer cancel()
	if err := s.waitControllerManager(ctx); err != nil {
		return fmt.Errorf("kube-controller-manager not working after %s: %w\n%s", controllerManagerReadyTimeout, err, s.LogTail("kube-controller-manager"))
	}
	return nil
}

// waitControllerManager proves the controllers work: a throwaway namespace gets its "default"
// ServiceAccount, and in it a ConfigMap owned by another ConfigMap disappears once its owner is
// deleted (the garbage collector has synced its monitors and collects). The namespace is then
// deleted but not awaited: the namespace controller holds every deletion for a fixed 5 s
// (namespaceDeletionGracePeriod) before it starts, which would add 5 s to every test binary.
func (s *Server) waitControllerManager(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kcm-probe-"}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("probe namespace: %w", err)
	}
	if err := WaitDefaultServiceAccount(ctx, client, ns.Name); err != nil {
		return err
	}
	configMaps := client.CoreV1().ConfigMaps(ns.Name)
	owner, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("probe owner: %w", err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}}}
	if _, err := configMaps.Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("probe dependent: %w", err)
	}
	if err := configMaps.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		return fmt.Errorf("probe owner deletion: %w", err)
	}
	if err := waitGone(ctx, "the garbage collector to delete a dependent ConfigMap", func(ctx context.Context) error {
		_, err := configMaps.Get(ctx, dependent.Name, metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("probe namespace deletion: %w", err)
	}
	return nil
}

// WaitDefaultServiceAccount waits until the service account controller has created the
// namespace's "default" ServiceAccount, without which no pod is admitted in it.
func WaitDefaultServiceAccount(ctx context.Context, client kubernetes.Interface, namespace string) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the default ServiceAccount of namespace %s: %w (last lookup: %v)", namespace, err, last)
	}
	return nil
}

// waitGone polls get until it reports NotFound.
func waitGone(ctx context.Context, what string, get func(ctx context.Context) error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last = get(ctx)
		return apierrors.IsNotFound(last), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last lookup: %v)", what, err, last)
	}
	return nil
}
