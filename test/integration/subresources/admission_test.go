package subresources

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
)

// installInstanceWebhooks registers the instance webhooks as manifests/virt-api-webhooks.yaml
// does (same rules and match conditions), under names of their own.
func installInstanceWebhooks(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"kubevirt.io"}, APIVersions: []string{"v1"}, Resources: []string{"virtualmachineinstances"}},
	}}
	conditions := []admissionregistrationv1.MatchCondition{
		{Name: "not-virt-controller", Expression: "request.userInfo.username != 'system:serviceaccount:kubevirt:virt-controller'"},
		{Name: "spec-changed", Expression: "request.operation == 'CREATE' || !has(oldObject.spec) || object.spec != oldObject.spec"},
	}
	none, fail := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(webhookURL + path), CABundle: caBundle}
	}
	_, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-api-instance-mutator"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "virtualmachineinstances-mutator.kubevirt.io", ClientConfig: cc("/mutate-virtualmachineinstances"),
			Rules: rules, MatchConditions: conditions, SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-api-instance-validator"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "virtualmachineinstances-validator.kubevirt.io", ClientConfig: cc("/validate-virtualmachineinstances"),
			Rules: rules, MatchConditions: conditions, SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "virt-api-instance-mutator", metav1.DeleteOptions{})
		_ = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "virt-api-instance-validator", metav1.DeleteOptions{})
	})
}

// instanceJSON spells a quantity and an empty map as a user may (1024Mi, nodeSelector: {}),
// not as Go writes them back (1Gi, nothing).
const instanceJSON = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"fixed"},
"spec":{"nodeSelector":{},"domain":{"resources":{"requests":{"memory":"64Mi"}},"devices":{"disks":[{"name":"scratch"}]}},
 "volumes":[{"name":"scratch","emptyDisk":{"capacity":"1024Mi"}}]}}`

// TestInstanceSpecIsImmutable: through the real apiserver an instance's spec cannot change,
// naming the field; its labels can, a status write is not affected, and a client that reads
// the instance into Go types and writes it back unchanged (re-spelling the spec, as
// virt-controller's finalizer update does) is not refused.
func TestInstanceSpecIsImmutable(t *testing.T) {
	installInstanceWebhooks(t)
	ns := newNamespace(t)
	ctx := context.Background()
	vmis := virt.KubevirtV1().VirtualMachineInstances(ns)
	// The apiserver loads each new webhook configuration on its own, a moment after its
	// creation: wait until the validating one refuses (a dry run); then, until the stored
	// instance carries the mutating one's defaults, create it again.
	refusal := `no volume named "nosuch"`
	if err := apiserver.UntilRefused(ctx, refusal, func() error {
		_, err := vmis.Create(ctx, &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Devices: v1.Devices{Disks: []v1.Disk{{Name: "nosuch"}}},
				Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("the validating webhook not active: %v", err)
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = virt.KubevirtV1().RESTClient().Post().Namespace(ns).Resource("virtualmachineinstances").
			SetHeader("Content-Type", "application/json").Body([]byte(instanceJSON)).Do(ctx).Error()
		var vmi *v1.VirtualMachineInstance
		if last == nil {
			vmi, last = vmis.Get(ctx, "fixed", metav1.GetOptions{})
		}
		if last != nil {
			return false, nil
		}
		if m := vmi.Spec.Domain.Machine; m == nil || m.Type == "" {
			last = vmis.Delete(ctx, "fixed", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("an instance created through the webhooks: %v (last error: %v)", err, last)
	}
	stored, err := vmis.Get(ctx, "fixed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := virt.KubevirtV1().RESTClient().Get().Namespace(ns).Resource("virtualmachineinstances").Name("fixed").DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"1024Mi"`) || !strings.Contains(string(raw), `"nodeSelector":{}`) {
		t.Fatalf("the stored instance should keep the user's spelling (the case under test): %v\n%s", err, raw)
	}

	// Read into Go types and written back: "1Gi", no nodeSelector. Not a change.
	stored.Labels = map[string]string{"a": "b"}
	updated, err := vmis.Update(ctx, stored, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("an update of the labels alone, spec re-spelled by Go: %v", err)
	}

	changed := updated.DeepCopy()
	changed.Spec.Hostname = "renamed"
	_, err = vmis.Update(ctx, changed, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.hostname: Forbidden: update of VMI object is restricted") {
		t.Fatalf("a hostname change: %v; want it refused naming spec.hostname", err)
	}
	patch := []byte(`{"spec":{"volumes":[{"name":"scratch","emptyDisk":{"capacity":"2Gi"}}]}}`)
	_, err = vmis.Patch(ctx, "fixed", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.volumes: Forbidden") {
		t.Fatalf("a larger emptyDisk: %v; want it refused naming spec.volumes", err)
	}

	patch = []byte(`{"metadata":{"annotations":{"c":"d"},"finalizers":["example.com/f"]}}`)
	if updated, err = vmis.Patch(ctx, "fixed", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotations and finalizers: %v", err)
	}
	updated.Status.Phase = v1.Running
	if _, err = vmis.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a status write: %v", err)
	}
	// Let the namespace go.
	if _, err = vmis.Patch(ctx, "fixed", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
