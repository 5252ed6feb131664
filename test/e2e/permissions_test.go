//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/vmistatus"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestComponentsCannotDoWhatTheyNeedNot: the installed RBAC answers `kubectl auth can-i` as
// manifests/PERMISSIONS.md says (test/integration/permissions checks every row; this checks
// the install on the cluster): virt-api execs into no pod, virt-handler patches instances
// (their status, which is no subresource; the node restriction holds it to that) and creates
// or deletes none.
func TestComponentsCannotDoWhatTheyNeedNot(t *testing.T) {
	f := framework.New(t)
	for _, tt := range []struct {
		account string
		args    []string
		want    string
	}{
		{"virt-api", []string{"create", "pods", "--subresource=exec"}, "no"},
		{"virt-api", []string{"get", "secrets"}, "no"},
		{"virt-handler", []string{"patch", "virtualmachineinstances.kubevirt.io"}, "yes"},
		{"virt-handler", []string{"update", "virtualmachineinstances.kubevirt.io"}, "no"},
		{"virt-handler", []string{"delete", "virtualmachineinstances.kubevirt.io"}, "no"},
		{"virt-handler", []string{"update", "pods"}, "no"},
		{"virt-controller", []string{"get", "secrets"}, "no"},
	} {
		as := "--as=system:serviceaccount:" + framework.ProjectNamespace + ":" + tt.account
		args := append(append([]string{"auth", "can-i"}, tt.args...), "-A", as)
		// can-i exits 1 when the answer is no: the answer is the output.
		out, _ := f.KubectlAs(f.Kubeconfig, "", args...)
		if got := strings.TrimSpace(out); got != tt.want {
			t.Errorf("kubectl %s: %q, want %q", strings.Join(args, " "), got, tt.want)
		}
	}
}

// TestVirtHandlerWritesOnlyItsNodesInstances: with a token bound to the virt-handler pod, as
// the kubelet gives it, virt-handler may write the status of an instance on its node, and the
// node restriction (manifests/virt-handler-node-restriction.yaml) refuses it, naming the
// nodes, for an instance on another node. The instances are never scheduled (no node has
// their label), so nothing else runs them.
func TestVirtHandlerWritesOnlyItsNodesInstances(t *testing.T) {
	f := framework.New(t)
	handlers, err := f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(f.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io=virt-handler"})
	if err != nil || len(handlers.Items) == 0 {
		t.Fatalf("virt-handler pods: %v, %v", handlers, err)
	}
	pod := handlers.Items[0]
	node := pod.Spec.NodeName
	own := unscheduledInstanceOn(t, f, "own", node)
	other := unscheduledInstanceOn(t, f, "other", "e2e-elsewhere")

	handler := handlerClient(t, f, &pod)
	err = probeStatus(f, handler, own.Name)
	if err != nil {
		t.Errorf("virt-handler of %s writing the status of an instance on its node: %v", node, err)
	}
	err = probeStatus(f, handler, other.Name)
	want := "virt-handler of node " + node + ` may write only instances on that node, not one on node "e2e-elsewhere"`
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("virt-handler of %s writing the status of an instance on e2e-elsewhere: %v, want forbidden: %s", node, err, want)
	}
	err = probeStatus(f, handlerClient(t, f, nil), own.Name)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "names no node") {
		t.Errorf("virt-handler with a token bound to no pod: %v, want forbidden for want of a node", err)
	}
}

// unscheduledInstanceOn creates an instance no node can take and makes its status say node,
// as the cluster admin (virt-controller would, on scheduling).
func unscheduledInstanceOn(t *testing.T, f *framework.Framework, name, node string) *v1.VirtualMachineInstance {
	t.Helper()
	spec := framework.TestGuestSpec(name)
	spec.NodeSelector = map[string]string{"vmctl.io/e2e-nowhere": "true"}
	vmis := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace)
	if _, err := vmis.Create(f.Context(), &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// virt-controller writes the first status; wait for it so the two writers do not race.
	f.Eventually(time.Minute, "VMI "+name+" to be pending", func(ctx context.Context) (bool, error) {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		return err == nil && vmi.Status.Phase != "", err
	})
	var vmi *v1.VirtualMachineInstance
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := vmis.Get(f.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh.Status.NodeName = node
		vmi, err = vmis.Update(f.Context(), fresh, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set VMI %s on node %s: %v", name, node, err)
	}
	return vmi
}

// handlerClient acts as virt-handler with a token bound to pod, as the kubelet projects it
// into the pod (and as `kubectl create token virt-handler -n kubevirt --bound-object-kind Pod
// --bound-object-name <pod>` makes one); with pod nil, with a token bound to nothing.
func handlerClient(t *testing.T, f *framework.Framework, pod *corev1.Pod) versioned.Interface {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if pod != nil {
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tok, err := f.Kube.CoreV1().ServiceAccounts(framework.ProjectNamespace).CreateToken(f.Context(), "virt-handler", req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("virt-handler token: %v", err)
	}
	cfg := rest.AnonymousClientConfig(f.Config)
	cfg.BearerToken = tok.Status.Token
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// probeStatus writes a condition into the instance's status through client, as virt-handler
// reports a guest.
func probeStatus(f *framework.Framework, client versioned.Interface, name string) error {
	vmis := client.KubevirtV1().VirtualMachineInstances(f.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := vmis.Get(f.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// A new message each time: every probe is a real change.
		vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: "E2EProbe", Status: corev1.ConditionTrue,
			Message: time.Now().Format(time.RFC3339Nano)}, metav1.Now())
		_, err = vmistatus.Write(f.Context(), vmis, vmi, false)
		return err
	})
}
