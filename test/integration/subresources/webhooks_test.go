package subresources

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
)

// installWebhooks registers the VM webhooks as manifests/virt-api-webhooks.yaml does (same
// rules and match condition), pointing at the local server by URL.
func installWebhooks(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"kubevirt.io"}, APIVersions: []string{"v1"}, Resources: []string{"virtualmachines"}},
	}}
	conditions := []admissionregistrationv1.MatchCondition{{Name: "spec-changed",
		Expression: "request.operation == 'CREATE' || !has(oldObject.spec) || object.spec != oldObject.spec"}}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(webhookURL + path), CABundle: caBundle}
	}
	_, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-api-mutator"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "virtualmachines-mutator.kubevirt.io", ClientConfig: cc("/mutate-virtualmachines"),
			Rules: rules, MatchConditions: conditions, SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-api-validator"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "virtualmachines-validator.kubevirt.io", ClientConfig: cc("/validate-virtualmachines"),
			Rules: rules, MatchConditions: conditions, SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "virt-api-mutator", metav1.DeleteOptions{})
		_ = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "virt-api-validator", metav1.DeleteOptions{})
	})
}

func vmSpec(disk string) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm"},
		Spec: v1.VirtualMachineSpec{RunStrategy: ptr.To(v1.RunStrategyAlways), Template: &v1.VirtualMachineInstanceTemplateSpec{
			Spec: v1.VirtualMachineInstanceSpec{
				Domain: v1.DomainSpec{
					Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
					Devices:   v1.Devices{Disks: []v1.Disk{{Name: disk}}},
				},
				Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "img"}}}},
			},
		}},
	}
}

// TestWebhooksDefaultAndReject: through the real apiserver a new VM gets a firmware UUID,
// q35 and a virtio disk bus; a disk naming no volume is refused naming the field; a status
// write is not sent to the webhooks at all.
func TestWebhooksDefaultAndReject(t *testing.T) {
	installWebhooks(t)
	ns := newNamespace(t)
	ctx := context.Background()
	// The apiserver loads each new webhook configuration on its own, a moment after its
	// creation: wait until the validating one refuses (a dry run), then the mutating one defaults.
	refusal := `no volume named "nosuch"`
	if err := apiserver.UntilRefused(ctx, refusal, func() error {
		_, err := virt.KubevirtV1().VirtualMachines(ns).Create(ctx, vmSpec("nosuch"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("the validating webhook not active: %v", err)
	}
	var vm *v1.VirtualMachine
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if vm, last = virt.KubevirtV1().VirtualMachines(ns).Create(ctx, vmSpec("root"), metav1.CreateOptions{}); last != nil {
			return false, nil
		}
		if f := vm.Spec.Template.Spec.Domain.Firmware; f == nil || f.UUID == "" {
			// Created before the mutating webhook was active: try again.
			last = virt.KubevirtV1().VirtualMachines(ns).Delete(ctx, vm.Name, metav1.DeleteOptions{})
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("a VM created through the webhooks: %v (last error: %v)", err, last)
	}
	d := vm.Spec.Template.Spec.Domain
	if d.Machine == nil || d.Machine.Type != "q35" || d.Devices.Disks[0].Disk == nil || d.Devices.Disks[0].Disk.Bus != v1.DiskBusSATA {
		t.Fatalf("defaults missing: machine %+v disk %+v", d.Machine, d.Devices.Disks[0])
	}

	bad := vmSpec("nosuch")
	bad.Name = "bad"
	_, err = virt.KubevirtV1().VirtualMachines(ns).Create(ctx, bad, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.template.spec.domain.devices.disks[0].name") || !strings.Contains(err.Error(), `no volume named "nosuch"`) {
		t.Fatalf("a disk naming no volume: %v", err)
	}

	// The UUID survives a spec update, and a status write goes through untouched.
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"a": "b"}
	if vm, err = virt.KubevirtV1().VirtualMachines(ns).Update(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if vm.Spec.Template.Spec.Domain.Firmware.UUID != d.Firmware.UUID {
		t.Fatal("the firmware UUID changed on update")
	}
	vm.Status.PrintableStatus = v1.VirtualMachineStatusStopped
	if _, err = virt.KubevirtV1().VirtualMachines(ns).UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
