package permissions

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vmctl/vmctl/test/apiserver"
)

// tenant is a namespace none of the install's Roles is in: rights there are cluster-wide ones.
const tenant = "tenant"

// TestEffectivePermissionsAreTheTable: in its own namespace, in default and in a tenant's, each
// service account's effective rights, less those of every authenticated service account, are
// exactly the table's rows for that namespace: nothing missing, nothing more.
func TestEffectivePermissionsAreTheTable(t *testing.T) {
	accounts := mustReadTable(t)
	for _, a := range accounts {
		t.Run(a.namespace+"/"+a.name, func(t *testing.T) {
			for _, ns := range sets.List(sets.New(a.namespace, "default", "kubevirt", tenant)) {
				baseline := rules(t, serviceaccount.MakeUsername(a.namespace, "permissions-baseline"), ns)
				got := rules(t, serviceaccount.MakeUsername(a.namespace, a.name), ns).Difference(baseline)
				want := sets.New[string]()
				for _, r := range a.allowed {
					if r.namespace == "" || r.namespace == ns {
						want.Insert(expand(r)...)
					}
				}
				for _, extra := range sets.List(got.Difference(want)) {
					t.Errorf("namespace %s: granted but not in PERMISSIONS.md: %s", ns, extra)
				}
				for _, missing := range sets.List(want.Difference(got)) {
					t.Errorf("namespace %s: in PERMISSIONS.md but not granted: %s", ns, missing)
				}
			}
		})
	}
}

// TestTableRowsAreAllowedAndDeniedRowsDenied asks the authorizer itself (SubjectAccessReview)
// about every allowed row where it applies, and every denied row in all namespaces, a
// tenant's and the account's own.
func TestTableRowsAreAllowedAndDeniedRowsDenied(t *testing.T) {
	for _, a := range mustReadTable(t) {
		t.Run(a.namespace+"/"+a.name, func(t *testing.T) {
			user := serviceaccount.MakeUsername(a.namespace, a.name)
			for _, r := range a.allowed {
				namespaces := []string{r.namespace}
				if r.namespace == "" {
					namespaces = append(namespaces, tenant)
				}
				names := r.names
				if len(names) == 0 {
					names = []string{""}
				}
				for _, ns := range namespaces {
					for _, verb := range r.verbs {
						for _, name := range names {
							if !allowed(t, user, a.namespace, r, ns, verb, name) {
								t.Errorf("%s %s %q in %s: denied, PERMISSIONS.md allows it", verb, r, name, where(ns))
							}
						}
					}
				}
			}
			for _, r := range a.denied {
				for _, ns := range []string{"", tenant, a.namespace} {
					for _, verb := range r.verbs {
						if allowed(t, user, a.namespace, r, ns, verb, "") {
							t.Errorf("%s %s in %s: allowed, PERMISSIONS.md denies it", verb, r, where(ns))
						}
					}
				}
			}
		})
	}
}

// TestEveryBoundServiceAccountIsInTheTable: a binding the install adds for a service account
// the table does not describe would escape the checks above. The only bindings to a group are
// KubeVirt's public roles (publicRoles), each granting every authenticated user exactly its
// one read-only rule.
func TestEveryBoundServiceAccountIsInTheTable(t *testing.T) {
	documented := sets.New[string]()
	for _, a := range mustReadTable(t) {
		documented.Insert(a.namespace + "/" + a.name)
	}
	bound := sets.New[string]()
	for _, obj := range installed {
		var subjects []rbacv1.Subject
		switch b := obj.(type) {
		case *rbacv1.ClusterRoleBinding:
			if rule, public := publicRoles[b.Name]; public {
				checkPublicBinding(t, b, rule)
				continue
			}
			subjects = b.Subjects
		case *rbacv1.RoleBinding:
			subjects = b.Subjects
		}
		for _, s := range subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				t.Errorf("binding to %s %s: the install binds service accounts only", s.Kind, s.Name)
				continue
			}
			bound.Insert(s.Namespace + "/" + s.Name)
		}
	}
	if !bound.Equal(documented) {
		t.Errorf("service accounts bound by the install %v, in PERMISSIONS.md %v", sets.List(bound), sets.List(documented))
	}
}

// publicRoles are the ClusterRoles (and their bindings, of the same name) every authenticated
// user has, as in KubeVirt, with the one rule each grants.
var publicRoles = map[string]rbacv1.PolicyRule{
	// virtctl version
	"kubevirt.io:default": {APIGroups: []string{"subresources.kubevirt.io"}, Resources: []string{"version"}, Verbs: []string{"get", "list"}},
	// the cluster-wide instance types and preferences a VM may name
	"instancetype.kubevirt.io:view": {APIGroups: []string{"instancetype.kubevirt.io"},
		Resources: []string{"virtualmachineclusterinstancetypes", "virtualmachineclusterpreferences"}, Verbs: []string{"get", "list", "watch"}},
}

// checkPublicBinding: binding b gives system:authenticated the ClusterRole of its name, which
// grants rule and nothing else.
func checkPublicBinding(t *testing.T, b *rbacv1.ClusterRoleBinding, rule rbacv1.PolicyRule) {
	t.Helper()
	if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != b.Name || len(b.Subjects) != 1 ||
		b.Subjects[0].Kind != rbacv1.GroupKind || b.Subjects[0].Name != "system:authenticated" {
		t.Errorf("%s binds %+v to %+v, want system:authenticated to ClusterRole %s", b.Name, b.Subjects, b.RoleRef, b.Name)
	}
	for _, obj := range installed {
		role, ok := obj.(*rbacv1.ClusterRole)
		if !ok || role.Name != b.Name {
			continue
		}
		if len(role.Rules) != 1 || !equality.Semantic.DeepEqual(role.Rules[0], rule) || role.AggregationRule != nil {
			t.Errorf("%s grants %+v, want only %+v", role.Name, role.Rules, rule)
		}
		return
	}
	t.Errorf("no ClusterRole %s", b.Name)
}

func where(namespace string) string {
	if namespace == "" {
		return "all namespaces"
	}
	return "namespace " + namespace
}

func mustReadTable(t *testing.T) []*account {
	t.Helper()
	accounts, err := readTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) == 0 {
		t.Fatal("PERMISSIONS.md lists no service account")
	}
	return accounts
}

// expand turns a row into "verb group/resource[/sub] name" strings, as rules gives them.
func expand(r row) []string {
	res := r.resource
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	names := r.names
	if len(names) == 0 {
		names = []string{"*"}
	}
	var out []string
	for _, verb := range r.verbs {
		for _, name := range names {
			out = append(out, verb+" "+r.group+"/"+res+" "+name)
		}
	}
	return out
}

// rules are the resource rules user has in namespace, by SelfSubjectRulesReview as that user
// (impersonated: a service account user gets its groups), expanded like expand.
func rules(t *testing.T, user, namespace string) sets.Set[string] {
	t.Helper()
	cfg := rest.CopyConfig(server.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := client.AuthorizationV1().SelfSubjectRulesReviews().Create(context.Background(),
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("rules of %s in %s: %v", user, namespace, err)
	}
	if review.Status.Incomplete || review.Status.EvaluationError != "" {
		t.Fatalf("rules of %s in %s incomplete: %s", user, namespace, review.Status.EvaluationError)
	}
	out := sets.New[string]()
	for _, rule := range review.Status.ResourceRules {
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{"*"}
		}
		for _, verb := range rule.Verbs {
			for _, group := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, name := range names {
						out.Insert(verb + " " + group + "/" + res + " " + name)
					}
				}
			}
		}
	}
	return out
}

// allowed asks a SubjectAccessReview whether the service account may verb r in namespace
// (all namespaces when empty) on the object name (any when empty).
func allowed(t *testing.T, user, saNamespace string, r row, namespace, verb, name string) bool {
	t.Helper()
	ok, err := apiserver.Allowed(context.Background(), kube, user, apiserver.ServiceAccountGroups(saNamespace), r.attributes(namespace, verb, name))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
