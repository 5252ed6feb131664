package handler

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// certsRefresh bounds how stale the stream server's certificates may be after virt-api rotates
// them (it renews long before expiry, and keeps the old CA in the bundle meanwhile).
const certsRefresh = time.Minute

// SecretCerts reads the stream server's material from the Secret virt-api keeps it in (read
// through the API rather than mounted: it is there as soon as virt-api wrote it), at most once
// per certsRefresh.
func SecretCerts(kube kubernetes.Interface, namespace, name string) func(context.Context) (handlerapi.Material, error) {
	var (
		mu   sync.Mutex
		last handlerapi.Material
		at   time.Time
	)
	return func(ctx context.Context) (handlerapi.Material, error) {
		mu.Lock()
		defer mu.Unlock()
		if !at.IsZero() && time.Since(at) < certsRefresh {
			return last, nil
		}
		s, err := kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return handlerapi.Material{}, err
		}
		last = handlerapi.Material{CABundle: s.Data[handlerapi.CABundleKey], Cert: s.Data[handlerapi.CertKey], Key: s.Data[handlerapi.KeyKey]}
		at = time.Now()
		return last, nil
	}
}
