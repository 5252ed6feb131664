package subresources

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/virtapi/certs"
)

// TestCertificatesFillTheShippedSecretAndInjectTheCA: the empty Secret manifests/ ships is
// filled, a second replica adopts the same bundle instead of making its own, and the CA is
// injected into the webhook configuration and the APIService.
func TestCertificatesFillTheShippedSecretAndInjectTheCA(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "virt-api-certs"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	_, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "certs-test-validator"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "x.kubevirt.io", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "virt-api", Port: ptr.To[int32](8444)}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "certs-test-validator", metav1.DeleteOptions{})
	})
	dyn := dynamic.NewForConfigOrDie(server.Config)
	apiServices := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	_, err = apiServices.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.certs-test.kubevirt.io"},
		"spec": map[string]any{"group": "certs-test.kubevirt.io", "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service": map[string]any{"namespace": ns, "name": "virt-api", "port": int64(443)}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServices.Delete(ctx, "v1.certs-test.kubevirt.io", metav1.DeleteOptions{}) })

	replica := func() *certs.Manager {
		return &certs.Manager{Kube: kube, Dynamic: dyn, Namespace: ns, Secret: "virt-api-certs", Dir: t.TempDir(),
			DNSNames: []string{"virt-api." + ns + ".svc"}, ValidatingWebhook: "certs-test-validator", APIService: "v1.certs-test.kubevirt.io"}
	}
	first, second := replica(), replica()
	if err := first.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	a, _ := first.GetCertificate(nil)
	b, _ := second.GetCertificate(nil)
	if a == nil || b == nil || !bytes.Equal(a.Certificate[0], b.Certificate[0]) {
		t.Fatal("the two replicas serve different certificates")
	}
	s, err := kube.CoreV1().Secrets(ns).Get(ctx, "virt-api-certs", metav1.GetOptions{})
	if err != nil || len(s.Data[certs.TLSCert]) == 0 || len(s.Data[certs.CABundleKey]) == 0 {
		t.Fatalf("secret not filled: %v %v", err, s.Data)
	}
	cfg, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "certs-test-validator", metav1.GetOptions{})
	if err != nil || !bytes.Equal(cfg.Webhooks[0].ClientConfig.CABundle, s.Data[certs.CABundleKey]) {
		t.Fatalf("webhook caBundle not injected: %v", err)
	}
	svc, err := apiServices.Get(ctx, "v1.certs-test.kubevirt.io", metav1.GetOptions{})
	got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle")
	if err != nil || got != base64.StdEncoding.EncodeToString(s.Data[certs.CABundleKey]) {
		t.Fatalf("APIService caBundle not injected: %v", err)
	}
}
