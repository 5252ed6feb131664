package permissions

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/vmistatus"
	"github.com/vmctl/vmctl/test/apiserver"
)

// nodeNameExtra is the user extra a pod-bound service account token carries its node in.
const nodeNameExtra = "authentication.kubernetes.io/node-name"

// TestPoliciesNameTheInstalledServiceAccounts: the policies' user names are written out in
// CEL, which kustomize's namespace does not rewrite; each must be a service account as
// installed, and every policy must name virt-handler (the node restrictions hold it, the
// status policy lets it through).
func TestPoliciesNameTheInstalledServiceAccounts(t *testing.T) {
	accounts := map[string]bool{}
	var policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	for _, obj := range installed {
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			accounts[serviceaccount.MakeUsername(o.Namespace, o.Name)] = true
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			policies = append(policies, o)
		}
	}
	if len(policies) != 3 {
		t.Fatalf("install has %d admission policies, want the two node restrictions and the instance status policy", len(policies))
	}
	named := regexp.MustCompile(`'(system:serviceaccount:[^']+)'`)
	for _, policy := range policies {
		var names []string
		for _, c := range policy.Spec.MatchConditions {
			for _, m := range named.FindAllStringSubmatch(c.Expression, -1) {
				names = append(names, m[1])
			}
		}
		if !slices.Contains(names, "system:serviceaccount:kubevirt:virt-handler") {
			t.Errorf("policy %s match conditions %+v do not name virt-handler", policy.Name, policy.Spec.MatchConditions)
		}
		for _, name := range names {
			if !accounts[name] {
				t.Errorf("policy %s names %s, which the install does not create", policy.Name, name)
			}
		}
	}
}

// TestVirtHandlerWritesOnlyItsNodesInstances: a virt-handler token bound to a pod on node-a
// writes the status of node-a's instance, and is refused, naming the nodes, for node-b's
// instance, for moving an instance to node-b, and without a node claim at all. (The policy's
// type checking is kube-controller-manager's, which does not run here; a CEL error would fail
// the allowed writes, failurePolicy Fail.)
func TestVirtHandlerWritesOnlyItsNodesInstances(t *testing.T) {
	ctx := context.Background()
	for _, node := range []string{"node-a", "node-b"} {
		if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ns := "restriction"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	onA := instanceOn(t, ns, "on-a", "node-a")
	onB := instanceOn(t, ns, "on-b", "node-b")

	handler := handlerClient(t, handlerToken(t, "node-a"))
	probe := func(vmi *v1.VirtualMachineInstance) error {
		fresh, err := handler.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh.Status.Reason = "probe-" + time.Now().Format("150405.000000")
		_, err = vmistatus.Write(ctx, handler.KubevirtV1().VirtualMachineInstances(ns), fresh, false)
		return err
	}
	refusal := `virt-handler of node node-a may write only instances on that node, not one on node "node-b"`
	err := apiserver.UntilRefused(ctx, refusal, func() error { return probe(onB) })
	expectRefused(t, "status of node-b's instance", err, refusal)

	if err := probe(onA); err != nil {
		t.Errorf("status of its own node's instance: %v", err)
	}
	moved, err := handler.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, onA.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved.Status.NodeName = "node-b"
	_, err = vmistatus.Write(ctx, handler.KubevirtV1().VirtualMachineInstances(ns), moved, false)
	expectRefused(t, "moving its instance to node-b", err, `virt-handler of node node-a may not move an instance to node "node-b"`)

	// An instance of node-b migrating to node-a: node-a's handler reports the target's part of
	// the migration state, and nothing else.
	incoming := instanceOn(t, ns, "to-a", "node-b")
	incoming.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-b", TargetNode: "node-a", TargetPod: "p"}
	if incoming, err = virt.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, incoming, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what    string
		change  func(*v1.VirtualMachineInstanceStatus)
		refused string
	}{
		{"the target's address", func(s *v1.VirtualMachineInstanceStatus) {
			s.MigrationState.TargetNodeAddress, s.MigrationState.TargetDirectMigrationNodePorts = "10.0.0.1", map[string]int{"4000": 0}
		}, ""},
		{"the domain's arrival", func(s *v1.VirtualMachineInstanceStatus) {
			s.MigrationState.TargetNodeDomainDetected, s.MigrationState.TargetNodeDomainReadyTimestamp = true, &metav1.Time{Time: time.Now()}
		}, ""},
		{"the end of the migration", func(s *v1.VirtualMachineInstanceStatus) { s.MigrationState.Completed = true }, "only the target fields"},
		{"the instance's reason", func(s *v1.VirtualMachineInstanceStatus) { s.Reason = "hijacked" }, "only the target fields"},
		{"the instance's node", func(s *v1.VirtualMachineInstanceStatus) { s.NodeName = "node-a" }, "may write only instances on that node"},
	} {
		fresh, err := handler.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, incoming.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tc.change(&fresh.Status)
		_, err = vmistatus.Write(ctx, handler.KubevirtV1().VirtualMachineInstances(ns), fresh, false)
		if tc.refused == "" && err != nil {
			t.Errorf("migration target writing %s: %v", tc.what, err)
		}
		if tc.refused != "" {
			expectRefused(t, "migration target writing "+tc.what, err, tc.refused)
		}
	}

	// The status is no subresource: the patch that carries it must leave the rest alone.
	for what, patch := range map[string]string{
		"the spec":      `{"spec":{"hostname":"hijacked"}}`,
		"a label":       `{"metadata":{"labels":{"app":"hijacked"}}}`,
		"an annotation": `{"metadata":{"annotations":{"a":"hijacked"}}}`,
		"a finalizer":   `{"metadata":{"finalizers":["example.com/hijack"]}}`,
	} {
		_, err = handler.KubevirtV1().VirtualMachineInstances(ns).Patch(ctx, onA.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		expectRefused(t, "virt-handler changing "+what+" of its own node's instance", err, "may change only an instance's status")
	}

	unbound := handlerClient(t, handlerToken(t, ""))
	fresh, err := unbound.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, onA.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh.Status.Reason = "unbound"
	_, err = vmistatus.Write(ctx, unbound.KubevirtV1().VirtualMachineInstances(ns), fresh, false)
	expectRefused(t, "a token bound to no pod", err, "names no node")

	// Only virt-handler is restricted: the admin (and virt-controller) write any instance.
	admin, err := virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, onB.Name, metav1.GetOptions{})
	if err == nil {
		admin.Status.Reason = "admin"
		_, err = virt.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, admin, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Errorf("admin status update: %v", err)
	}
}

// instanceOn creates an instance whose status says it runs on node, as virt-controller
// would have written it.
func instanceOn(t *testing.T, ns, name, node string) *v1.VirtualMachineInstance {
	t.Helper()
	ctx := context.Background()
	vmi, err := virt.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi.Status.Phase, vmi.Status.NodeName = v1.Scheduled, node
	if vmi, err = virt.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return vmi
}

// handlerToken is a virt-handler token bound to a pod of the DaemonSet's kind on node, as the
// kubelet projects it; with node empty, a token bound to nothing.
func handlerToken(t *testing.T, node string) string {
	t.Helper()
	ctx := context.Background()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if node != "" {
		pod, err := kube.CoreV1().Pods("kubevirt").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "virt-handler-"},
			Spec: corev1.PodSpec{
				ServiceAccountName: "virt-handler", NodeName: node,
				Containers: []corev1.Container{{Name: "virt-handler", Image: "vmctl/virt-handler:devel"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tok, err := kube.CoreV1().ServiceAccounts("kubevirt").CreateToken(ctx, "virt-handler", req, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The claim must be there (or not) for the test to mean anything.
	review, err := kubernetes.NewForConfigOrDie(tokenConfig(tok.Status.Token)).AuthenticationV1().
		SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Extra[nodeNameExtra]; (node == "" && len(got) != 0) || (node != "" && (len(got) != 1 || got[0] != node)) {
		t.Fatalf("token for node %q: user extra %s = %v", node, nodeNameExtra, got)
	}
	return tok.Status.Token
}

func tokenConfig(token string) *rest.Config {
	cfg := rest.AnonymousClientConfig(server.Config)
	cfg.BearerToken = token
	return cfg
}

func handlerClient(t *testing.T, token string) versioned.Interface {
	t.Helper()
	client, err := versioned.NewForConfig(tokenConfig(token))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// expectRefused wants a Forbidden error whose message has every part.
func expectRefused(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: %v, want forbidden by the node restriction", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %q does not say %q", what, err.Error(), p)
		}
	}
}
