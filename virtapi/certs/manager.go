package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// Manager keeps the Secret, the files the aggregated server reads, the webhook server's
// certificate and the injected CA bundles in step.
type Manager struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Namespace/Secret is where the bundle lives (shipped empty by manifests/).
	Namespace, Secret string
	// DNSNames the serving certificate is for: the Service's names; the first is its CN.
	DNSNames []string
	// Dir receives tls.crt and tls.key for the aggregated server, which reloads them.
	Dir string
	// Names of the objects whose caBundle must be the CA's; empty ones are skipped.
	MutatingWebhook, ValidatingWebhook, APIService string

	current atomic.Pointer[tls.Certificate]
	last    Bundle
}

// CertFile and KeyFile are where Ensure writes the serving pair.
func (m *Manager) CertFile() string { return filepath.Join(m.Dir, TLSCert) }
func (m *Manager) KeyFile() string  { return filepath.Join(m.Dir, TLSKey) }

// GetCertificate is tls.Config.GetCertificate: the current pair, so rotation needs no restart.
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := m.current.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no serving certificate yet")
}

// Ensure makes the Secret hold a valid bundle, then uses and publishes it. Replicas race
// safely: creation and renewal are optimistic writes, and the loser adopts the winner's.
func (m *Manager) Ensure(ctx context.Context) error {
	var b Bundle
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 6}, func(ctx context.Context) (bool, error) {
		var err error
		b, err = m.ensureSecret(ctx)
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return false, nil // another replica wrote first: read its bundle
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", m.Namespace, m.Secret, err)
	}
	if err := m.use(b); err != nil {
		return err
	}
	return m.inject(ctx, b.CABundle)
}

func (m *Manager) ensureSecret(ctx context.Context) (Bundle, error) {
	secrets := m.Kube.CoreV1().Secrets(m.Namespace)
	now := time.Now()
	s, err := secrets.Get(ctx, m.Secret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		b, err := Renew(Bundle{}, m.DNSNames, now)
		if err != nil {
			return Bundle{}, err
		}
		_, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: m.Secret, Namespace: m.Namespace},
			Type:       corev1.SecretTypeOpaque, Data: b.data(),
		}, metav1.CreateOptions{})
		return b, err
	}
	if err != nil {
		return Bundle{}, err
	}
	b := fromData(s.Data)
	if !b.NeedsRenewal(m.DNSNames, now) {
		return b, nil
	}
	if b, err = Renew(b, m.DNSNames, now); err != nil {
		return Bundle{}, err
	}
	klog.InfoS("renewing virt-api's serving certificate", "secret", klog.KObj(s))
	s.Data = b.data()
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	return b, err
}

// use writes the pair for the aggregated server (atomically: it may be reading) and loads
// it for the webhook server.
func (m *Manager) use(b Bundle) error {
	if b.Equal(m.last) {
		return nil
	}
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return fmt.Errorf("serving pair: %w", err)
	}
	if m.Dir != "" {
		for name, data := range map[string][]byte{TLSKey: b.Key, TLSCert: b.Cert} {
			tmp := filepath.Join(m.Dir, "."+name+".tmp")
			if err := os.WriteFile(tmp, data, 0o600); err != nil {
				return err
			}
			if err := os.Rename(tmp, filepath.Join(m.Dir, name)); err != nil {
				return err
			}
		}
	}
	m.current.Store(&pair)
	m.last = b
	return nil
}

// Run re-checks every period (renewal, another replica's renewal, a re-created webhook
// configuration that lost its caBundle) until ctx ends.
func (m *Manager) Run(ctx context.Context, period time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := m.Ensure(ctx); err != nil {
			klog.ErrorS(err, "keeping virt-api's certificates")
		}
	}, period)
}

// inject writes caBundle into the webhook configurations and the APIService where it differs.
func (m *Manager) inject(ctx context.Context, caBundle []byte) error {
	if m.MutatingWebhook != "" {
		c := m.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
		cfg, err := c.Get(ctx, m.MutatingWebhook, metav1.GetOptions{})
		if err == nil {
			configs := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
			for i := range cfg.Webhooks {
				configs[i] = &cfg.Webhooks[i].ClientConfig
			}
			if setCABundle(configs, caBundle) {
				_, err = c.Update(ctx, cfg, metav1.UpdateOptions{})
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("mutating webhook %s: %w", m.MutatingWebhook, err)
		}
	}
	if m.ValidatingWebhook != "" {
		c := m.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		cfg, err := c.Get(ctx, m.ValidatingWebhook, metav1.GetOptions{})
		if err == nil {
			configs := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
			for i := range cfg.Webhooks {
				configs[i] = &cfg.Webhooks[i].ClientConfig
			}
			if setCABundle(configs, caBundle) {
				_, err = c.Update(ctx, cfg, metav1.UpdateOptions{})
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("validating webhook %s: %w", m.ValidatingWebhook, err)
		}
	}
	if m.APIService != "" && m.Dynamic != nil {
		c := m.Dynamic.Resource(apiServices)
		svc, err := c.Get(ctx, m.APIService, metav1.GetOptions{})
		if err == nil {
			want := base64.StdEncoding.EncodeToString(caBundle)
			if got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle"); got != want {
				_ = unstructured.SetNestedField(svc.Object, want, "spec", "caBundle")
				_, err = c.Update(ctx, svc, metav1.UpdateOptions{})
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("APIService %s: %w", m.APIService, err)
		}
	}
	return nil
}

// setCABundle points every webhook client config at caBundle and says whether any changed.
func setCABundle(configs []*admissionregistrationv1.WebhookClientConfig, caBundle []byte) bool {
	changed := false
	for _, c := range configs {
		if !bytes.Equal(c.CABundle, caBundle) {
			c.CABundle, changed = caBundle, true
		}
	}
	return changed
}
