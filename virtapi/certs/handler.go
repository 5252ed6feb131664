package certs

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// HandlerCerts keeps the mutual TLS between virt-api and the virt-handlers (package
// handlerapi): a CA of its own with the handlers' serving pair, in Secret CASecret, which only
// virt-api reads (its key could sign a client certificate that opens every console); that pair
// and the CA bundle, in Secret ServerSecret, which handlers read; and virt-api's client
// certificate, which each replica issues itself and keeps in memory.
type HandlerCerts struct {
	Kube                              kubernetes.Interface
	Namespace, CASecret, ServerSecret string

	ca     *Manager
	mu     sync.Mutex
	client handlerapi.Material
	issued time.Time
}

// Ensure creates or renews the CA Secret, publishes the handlers' Secret and renews the client
// certificate as needed. Replicas race safely, as Manager.Ensure does.
func (h *HandlerCerts) Ensure(ctx context.Context) error {
	if h.ca == nil {
		h.ca = &Manager{Kube: h.Kube, Namespace: h.Namespace, Secret: h.CASecret, DNSNames: []string{handlerapi.ServerName}}
	}
	if err := h.ca.Ensure(ctx); err != nil {
		return err
	}
	b := h.ca.last
	if err := h.publish(ctx, b); err != nil {
		return fmt.Errorf("secret %s/%s: %w", h.Namespace, h.ServerSecret, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if bytes.Equal(h.client.CABundle, b.CABundle) && now.Sub(h.issued) < ServingLifetime/3 {
		return nil
	}
	cert, key, err := IssueClient(b, handlerapi.ClientName, now)
	if err != nil {
		return err
	}
	h.client, h.issued = handlerapi.Material{CABundle: b.CABundle, Cert: cert, Key: key}, now
	return nil
}

// Client is virt-api's side of the mutual TLS.
func (h *HandlerCerts) Client() (handlerapi.Material, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client.Cert == nil {
		return handlerapi.Material{}, fmt.Errorf("no client certificate for virt-handler yet")
	}
	return h.client, nil
}

// Run re-checks every period until ctx ends.
func (h *HandlerCerts) Run(ctx context.Context, period time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := h.Ensure(ctx); err != nil {
			klog.ErrorS(err, "keeping virt-handler's certificates")
		}
	}, period)
}

// publish writes the handlers' Secret when it differs from b.
func (h *HandlerCerts) publish(ctx context.Context, b Bundle) error {
	want := map[string][]byte{handlerapi.CABundleKey: b.CABundle, handlerapi.CertKey: b.Cert, handlerapi.KeyKey: b.Key}
	secrets := h.Kube.CoreV1().Secrets(h.Namespace)
	s, err := secrets.Get(ctx, h.ServerSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: h.ServerSecret, Namespace: h.Namespace},
			Type:       corev1.SecretTypeOpaque, Data: want,
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another replica's, from the same CA Secret
		}
		return err
	}
	if err != nil {
		return err
	}
	same := len(s.Data) == len(want)
	for k, v := range want {
		same = same && bytes.Equal(s.Data[k], v)
	}
	if same {
		return nil
	}
	klog.InfoS("publishing virt-handler's certificates", "secret", klog.KObj(s))
	s.Data = want
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	return err
}
