package permissions

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
)

// TestUsersCannotWriteAnInstancesStatus: the instance's status is no subresource (as in
// KubeVirt), so the edit role's update reaches it; the status policy keeps the status and the
// kubevirt.io/nodeName label the platform's, while the rest of the object stays the user's.
func TestUsersCannotWriteAnInstancesStatus(t *testing.T) {
	ctx := context.Background()
	ns := "status-policy"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubevirt.io:edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := impersonate("alice", "system:authenticated").KubevirtV1().VirtualMachineInstances(ns)

	instance := func(name string) *v1.VirtualMachineInstance {
		return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		}}}
	}
	// A generated name: a create the policy, not yet loaded, let through does not turn the
	// next try into AlreadyExists.
	forged := instance("")
	forged.GenerateName = "forged-"
	forged.Status.Phase, forged.Status.NodeName = v1.Running, "node-a"
	refusal := "status: a new instance's status must be empty"
	err := apiserver.UntilRefused(ctx, refusal, func() error {
		_, err := alice.Create(ctx, forged, metav1.CreateOptions{})
		return err
	})
	expectRefused(t, "a new instance with a status", err, refusal)

	// The typed client sends `status: {}`, as manifests often have it.
	vmi, err := alice.Create(ctx, instance("mine"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a new instance with an empty status: %v", err)
	}
	vmi.Annotations = map[string]string{"note": "users keep the metadata"}
	if vmi, err = alice.Update(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Errorf("an annotation: %v", err)
	}

	for what, tc := range map[string]struct {
		change  func(*v1.VirtualMachineInstance)
		refused string
	}{
		"the phase":         {func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Running }, "written by virt-controller and virt-handler only"},
		"the launcher pods": {func(vmi *v1.VirtualMachineInstance) { vmi.Status.ActivePods = map[types.UID]string{"u": "node-a"} }, "written by virt-controller"},
		"the node label":    {func(vmi *v1.VirtualMachineInstance) { vmi.Labels = map[string]string{v1.NodeNameLabel: "node-a"} }, "set by virt-controller only"},
	} {
		fresh, err := alice.Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tc.change(fresh)
		_, err = alice.Update(ctx, fresh, metav1.UpdateOptions{})
		expectRefused(t, "a user writing "+what, err, tc.refused)
	}

	// virt-controller writes the status and the label at once.
	controller := impersonate("system:serviceaccount:kubevirt:virt-controller", "system:serviceaccounts", "system:authenticated").
		KubevirtV1().VirtualMachineInstances(ns)
	fresh, err := controller.Get(ctx, vmi.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh.Status.Phase, fresh.Status.NodeName = v1.Scheduled, "node-a"
	fresh.Labels = map[string]string{v1.NodeNameLabel: "node-a"}
	if _, err := controller.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Errorf("virt-controller writing the status and the node label: %v", err)
	}
}

// impersonate acts as user, in groups, through the cluster admin's credentials.
func impersonate(user string, groups ...string) versioned.Interface {
	cfg := rest.CopyConfig(server.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return versioned.NewForConfigOrDie(cfg)
}
