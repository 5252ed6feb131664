//go:build e2e

// Package e2e holds the end-to-end tests: they run against a real cluster (make cluster-up,
// make cluster-sync) and read like the user guide: create, observe, assert.
package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestEveryRealNodeIsReadyAndSchedulable: each node that runs containers is Ready, and its
// virt-handler beats on it and marks it schedulable for instances (nothing else does).
func TestEveryRealNodeIsReadyAndSchedulable(t *testing.T) {
	f := framework.New(t)
	for _, node := range f.RealNodes(1) {
		if !framework.NodeReady(&node) {
			t.Errorf("node %s is not Ready: %v", node.Name, node.Status.Conditions)
		}
		f.Eventually(30*time.Second, "virt-handler's heartbeat on "+node.Name, func(ctx context.Context) (bool, error) {
			got, err := f.Kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			return err == nil && got.Labels[v1.SchedulableLabel] == "true" && got.Annotations[v1.HeartbeatAnnotation] != "", err
		})
	}
}

func TestTheProjectsComponentsAreReady(t *testing.T) {
	f := framework.New(t)
	f.WaitDeploymentReady(framework.ProjectNamespace, "virt-controller", 2*time.Minute)
	f.WaitDeploymentReady(framework.ProjectNamespace, "virt-api", 2*time.Minute)
	f.WaitDaemonSetReady(framework.ProjectNamespace, "virt-handler", 2*time.Minute)
}

// TestADeploymentIsReachedThroughAClusterIPService is the cluster's own smoke test: pods of a
// project-built image get IPs, and kube-proxy spreads a Service's traffic over them.
func TestADeploymentIsReachedThroughAClusterIPService(t *testing.T) {
	f := framework.New(t)
	svc := createHello(t, f, 2)
	url := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
	answered := map[string]bool{}
	f.Eventually(time.Minute, "both pods to answer on "+url, func(ctx context.Context) (bool, error) {
		pod, err := get(ctx, url)
		if err != nil {
			return false, err
		}
		answered[pod] = true
		return len(answered) == 2, nil
	})
}

// TestOrphanDeleteLeavesTheReplicaSet deletes a Deployment with --cascade=orphan: as
// Kubernetes documents, its ReplicaSet and pods stay, no longer owned by anything.
func TestOrphanDeleteLeavesTheReplicaSet(t *testing.T) {
	f := framework.New(t)
	ctx := f.Context()
	labels := map[string]string{"app": "orphaned"}
	d := helloDeployment(labels, 1)
	d.Name = "orphaned"
	if _, err := f.Kube.AppsV1().Deployments(f.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitDeploymentReady(f.Namespace, "orphaned", 2*time.Minute)

	err := f.Kube.AppsV1().Deployments(f.Namespace).Delete(ctx, "orphaned",
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
	if err != nil {
		t.Fatal(err)
	}
	f.Eventually(time.Minute, "the ReplicaSet to lose its owner", func(ctx context.Context) (bool, error) {
		if _, err := f.Kube.AppsV1().Deployments(f.Namespace).Get(ctx, "orphaned", metav1.GetOptions{}); err == nil {
			return false, nil
		}
		rss, err := f.Kube.AppsV1().ReplicaSets(f.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(rss.Items) != 1 {
			return false, fmt.Errorf("want 1 ReplicaSet, got %d (%v)", len(rss.Items), err)
		}
		return len(rss.Items[0].OwnerReferences) == 0, nil
	})
	pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].DeletionTimestamp != nil || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Errorf("want the orphaned pod still running, got %d pods: %+v", len(pods.Items), pods.Items)
	}
}

// createHello creates the hello Deployment with that many replicas behind Service hello (port
// 80), waits until its pods are ready and returns the Service.
func createHello(t *testing.T, f *framework.Framework, replicas int32) *corev1.Service {
	t.Helper()
	labels := map[string]string{"app": "hello"}
	if _, err := f.Kube.AppsV1().Deployments(f.Namespace).Create(f.Context(), helloDeployment(labels, replicas), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := f.Kube.CoreV1().Services(f.Namespace).Create(f.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WaitDeploymentReady(f.Namespace, "hello", 2*time.Minute)
	return svc
}

func helloDeployment(labels map[string]string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name:            "hello",
						Image:           "vmctl/hello:devel",
						ImagePullPolicy: corev1.PullIfNotPresent,
						Ports:           []corev1.ContainerPort{{ContainerPort: 8080}},
						SecurityContext: framework.Restricted(),
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

// freshConnections opens a new connection per request, so kube-proxy picks a backend each time.
var freshConnections = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// get fetches a URL with a short timeout and returns the body.
func get(ctx context.Context, url string) (string, error) { return getWithin(ctx, url, 3*time.Second) }

// getWithin fetches a URL, giving up after timeout, and returns the body.
func getWithin(ctx context.Context, url string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := freshConnections.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// TestKustomizeSetsTheLauncherImage: `kustomize edit set image vmctl/virt-launcher=...` on
// an overlay of manifests/ reaches the image virt-controller gives launcher pods (it reads
// it from its own pod's virt-launcher-image init container); the install here carries the
// local build's launcher image there.
func TestKustomizeSetsTheLauncherImage(t *testing.T) {
	f := framework.New(t)
	overlay := t.TempDir()
	manifests, err := filepath.Abs("../../manifests")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize takes bases by relative path only.
	base, err := filepath.Rel(overlay, manifests)
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "resources: [" + base + "]\n" +
		"images:\n- {name: vmctl/virt-launcher, newName: mirror/virt-launcher, newTag: v9}\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := f.Kubectl("kustomize", overlay); !strings.Contains(out, "image: mirror/virt-launcher:v9") {
		t.Errorf("kubectl kustomize with images vmctl/virt-launcher=mirror/virt-launcher:v9 does not set it:\n%s", out)
	}

	d, err := f.Kube.AppsV1().Deployments(framework.ProjectNamespace).Get(f.Context(), "virt-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.InitContainers) != 1 || d.Spec.Template.Spec.InitContainers[0].Image != "vmctl/virt-launcher:devel" {
		t.Errorf("virt-controller's init containers %+v, want virt-launcher-image with vmctl/virt-launcher:devel", d.Spec.Template.Spec.InitContainers)
	}
}
