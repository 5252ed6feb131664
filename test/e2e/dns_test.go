//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestServicesResolveByName: the cluster's DNS answers for Service names, by short name and
// fully qualified, in pods and in guests (whose DHCP lease carries the pod's nameserver and
// search domains, as KubeVirt's masquerade binding gives them).
func TestServicesResolveByName(t *testing.T) {
	f := framework.New(t)
	// The guest boots while the hello pod starts.
	f.CreateVM(framework.TestGuestVM("resolver", v1.RunStrategyAlways))
	svc := createHello(t, f, 1)
	// Names are the point here, not routing: wait until kube-proxy routes the Service.
	f.Eventually(time.Minute, "the Service to answer at its ClusterIP", func(ctx context.Context) (bool, error) {
		body, _ := get(ctx, "http://"+svc.Spec.ClusterIP+"/")
		return strings.HasPrefix(body, "hello-"), nil
	})
	names := []string{"hello", "hello." + f.Namespace + ".svc.cluster.local"}

	t.Run("pod", func(t *testing.T) {
		for i, name := range names {
			pod := fetchFromPod(t, f, fmt.Sprintf("client-%d", i), "http://"+name+"/")
			if !strings.Contains(pod, "200 OK hello-") {
				t.Errorf("a pod fetching http://%s/ got %q, want the hello pod's answer", name, pod)
			}
		}
	})

	t.Run("guest", func(t *testing.T) {
		vmi := f.WaitVMIPhase("resolver", v1.Running, bootTimeout)
		pod := f.LauncherPod(vmi)
		for _, name := range names {
			url := "http://" + pod.Status.PodIP + "/cgi-bin/lookup?" + name
			var body string
			f.Eventually(2*time.Minute, "the guest to resolve and fetch "+name, func(ctx context.Context) (bool, error) {
				// Errors are retried: the guest may not serve HTTP yet.
				body, _ = getWithin(ctx, url, 20*time.Second)
				return strings.Contains(body, "hello-"), nil
			})
			t.Logf("the guest's lookup of %s:\n%s", name, body)
			if !strings.Contains(body, "search "+f.Namespace+".svc.cluster.local") {
				t.Errorf("the guest's resolver has no cluster search domain:\n%s", body)
			}
		}
	})
}

// fetchFromPod runs `hello get URL` in a pod of its own and returns what it printed.
func fetchFromPod(t *testing.T, f *framework.Framework, name, url string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "get", Image: "vmctl/hello:devel", ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"get", url}, SecurityContext: framework.Restricted(),
			}},
		},
	}
	if _, err := f.Kube.CoreV1().Pods(f.Namespace).Create(f.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually(time.Minute, "pod "+name+" to finish", func(ctx context.Context) (bool, error) {
		p, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed), err
	})
	out, err := f.Kube.CoreV1().Pods(f.Namespace).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(f.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestSubdomainMakesTheGuestResolvable: an instance with hostname and subdomain, and a
// headless Service of the subdomain's name selecting it, is <hostname>.<subdomain>.<ns>.svc
// in the cluster's DNS, as a pod would be; another guest resolves and fetches it.
func TestSubdomainMakesTheGuestResolvable(t *testing.T) {
	f := framework.New(t)
	web := framework.TestGuestVM("web", v1.RunStrategyAlways)
	web.Spec.Template.Spec.Hostname, web.Spec.Template.Spec.Subdomain = "web", "vms"
	f.CreateVM(web)
	f.CreateVM(framework.TestGuestVM("client", v1.RunStrategyAlways))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "vms"}, Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	if _, err := f.Kube.CoreV1().Services(f.Namespace).Create(f.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitVMIPhase("web", v1.Running, bootTimeout)
	client := f.LauncherPod(f.WaitVMIPhase("client", v1.Running, bootTimeout))
	name := "web.vms." + f.Namespace + ".svc.cluster.local"
	var body string
	f.Eventually(2*time.Minute, "the client guest to resolve and fetch "+name, func(ctx context.Context) (bool, error) {
		body, _ = getWithin(ctx, "http://"+client.Status.PodIP+"/cgi-bin/lookup?"+name, 20*time.Second)
		return strings.Contains(body, "hostname=web"), nil
	})
}
