// Package permissions proves each component's least privilege against a real kube-apiserver
// (RBAC authorization, admission policies on): the rendered manifests/ and
// examples/vmctl-rbac.yaml grant exactly what manifests/PERMISSIONS.md documents, and
// virt-handler's pod-bound token writes only its own node's instances; and the install's host
// paths create nothing on a node.
package permissions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/examples"
)

var (
	server *apiserver.Server
	kube   kubernetes.Interface
	virt   versioned.Interface
	// installed are the access objects of the install, as applied: what the tests read the
	// service accounts and the node restriction policy from.
	installed []runtime.Object
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, stop, err := apiserver.Setup(false)
	defer stop()
	server, kube, virt = env.Server, env.Kube, env.Virt
	if err == nil {
		installed, err = applyAccess(context.Background())
	}
	if err == nil {
		err = waitForAccess(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}
	return m.Run()
}

// waitForAccess waits until the authorizer allows each account the first verb of each row the
// table allows it (so it has loaded every role and binding the rows rely on): the tests below
// read effective rights, which a binding not yet loaded would leave out.
func waitForAccess(ctx context.Context) error {
	accounts, err := readTable()
	if err != nil {
		return err
	}
	for _, a := range accounts {
		user := serviceaccount.MakeUsername(a.namespace, a.name)
		for _, r := range a.allowed {
			name := ""
			if len(r.names) > 0 {
				name = r.names[0]
			}
			if err := apiserver.WaitAllowed(ctx, kube, user, apiserver.ServiceAccountGroups(a.namespace), r.attributes(r.namespace, r.verbs[0], name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// accessKinds are what the install grants with. Workloads, webhooks and the APIService are
// left out: nothing serves them here, and a webhook that cannot be called fails every write.
var accessKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"Role": true, "RoleBinding": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// applyAccess creates the access objects of `kubectl kustomize manifests/` (what users
// install, kustomize's namespace applied) and examples/vmctl-rbac.yaml in default.
func applyAccess(ctx context.Context) ([]runtime.Object, error) {
	objs, err := renderManifests(func(kind string) bool { return accessKinds[kind] })
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if err := create(ctx, obj); err != nil {
			return nil, err
		}
	}
	vmctl, err := examples.Load("vmctl-rbac.yaml")
	if err != nil {
		return nil, err
	}
	if err := examples.Create(ctx, kube, virt, examples.ExamplesNamespace, vmctl...); err != nil {
		return nil, err
	}
	return append(objs, vmctl...), nil
}

// renderManifests is `kubectl kustomize manifests/`, the objects of the kinds keep keeps.
func renderManifests(keep func(kind string) bool) ([]runtime.Object, error) {
	kubectl, err := apiserver.Tool("kubectl")
	if err != nil {
		return nil, err
	}
	root, err := apiserver.RepoRoot()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(root, "manifests")).Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize manifests: %w", err)
	}
	return examples.Decode(out, keep)
}

func create(ctx context.Context, obj runtime.Object) error {
	var err error
	opts := metav1.CreateOptions{}
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = kube.CoreV1().Namespaces().Create(ctx, o, opts)
	case *corev1.ServiceAccount:
		_, err = kube.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.ClusterRole:
		_, err = kube.RbacV1().ClusterRoles().Create(ctx, o, opts)
	case *rbacv1.ClusterRoleBinding:
		_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
	case *rbacv1.Role:
		_, err = kube.RbacV1().Roles(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.RoleBinding:
		_, err = kube.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		_, err = kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, opts)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		_, err = kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, opts)
	default:
		err = fmt.Errorf("no create for %T", obj)
	}
	if err != nil {
		return fmt.Errorf("create %T: %w", obj, err)
	}
	return nil
}
