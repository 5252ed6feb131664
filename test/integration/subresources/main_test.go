// Package subresources proves virt-api's start/stop/restart handlers and its admission
// webhooks against a real kube-apiserver and etcd: the handlers' writes and conflict
// handling, and the webhook configurations' match conditions, patches and rejections.
package subresources

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/virtapi/admission"
	"github.com/vmctl/vmctl/virtapi/certs"
	"github.com/vmctl/vmctl/virtapi/webhook"
)

var (
	server *apiserver.Server
	kube   kubernetes.Interface
	virt   versioned.Interface
	// webhookURL is the webhooks' base, https://localhost:PORT, trusted through caBundle.
	webhookURL string
	caBundle   []byte
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, stop, err := apiserver.Setup(false)
	defer stop()
	server, kube, virt = env.Server, env.Kube, env.Virt
	if err == nil {
		err = startWebhooks()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}
	return m.Run()
}

// startWebhooks serves virt-api's webhooks on a free localhost port with a certificate made
// by virtapi/certs, as virt-api does in the cluster.
func startWebhooks() error {
	b, err := certs.Renew(certs.Bundle{}, []string{"localhost"}, time.Now())
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	getCert := func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &pair, nil }
	go func() { _ = webhook.Serve(context.Background(), addr, getCert, admission.DefaultLimits(), nil) }()
	_, port, _ := net.SplitHostPort(addr)
	webhookURL, caBundle = "https://localhost:"+port, b.CABundle
	return nil
}

// newNamespace gives each test a namespace of its own (with the default ServiceAccount pods
// need: no controller-manager makes it here).
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	return ns.Name
}
