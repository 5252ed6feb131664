// Command virt-api serves KubeVirt's subresource API (subresources.kubevirt.io/v1: start,
// stop, restart, pause, unpause, softreboot, freeze, unfreeze, console, portforward,
// expand-spec, expand-vm-spec, version) as an aggregated API server, and the admission
// webhooks for VirtualMachines, instances and replica sets. It makes its own certificates
// (package virtapi/certs) and injects their CA into the APIService and webhook configurations.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/instancetype"
	"github.com/vmctl/vmctl/virtapi/admission"
	"github.com/vmctl/vmctl/virtapi/certs"
	"github.com/vmctl/vmctl/virtapi/server"
	"github.com/vmctl/vmctl/virtapi/subresources"
	"github.com/vmctl/vmctl/virtapi/webhook"
)

func main() {
	namespace := pflag.String("namespace", envOr("POD_NAMESPACE", "kubevirt"), "namespace of virt-api's Service and Secret")
	service := pflag.String("service", "virt-api", "virt-api's Service: its DNS names go into the serving certificate")
	secret := pflag.String("cert-secret", "virt-api-certs", "Secret holding the CA and serving certificate")
	handlerCA := pflag.String("handler-ca-secret", "virt-handler-ca", "Secret holding the CA of the mutual TLS with virt-handler (read by virt-api only)")
	handlerCerts := pflag.String("handler-certs-secret", "virt-handler-certs", "Secret virt-handler reads its stream server's certificates from")
	webhookAddr := pflag.String("webhook-addr", ":8444", "address of the admission webhooks (TLS)")
	evictionStrategy := pflag.String("eviction-strategy", string(v1.EvictionStrategyNone), "the cluster's evictionStrategy for instances that name none: None, LiveMigrate or External (KubeVirt's spec.configuration.evictionStrategy)")
	certCheck := pflag.Duration("cert-check-period", time.Hour, "how often certificates are checked for renewal")
	limits := admission.DefaultLimits()
	webhook.AddFlags(pflag.CommandLine, &limits) // --max-empty-disk-capacity
	opts := server.NewOptions()
	opts.AddFlags(pflag.CommandLine) // includes --cert-dir, where the serving pair is written
	component.ParseFlags()
	certDir := opts.SecureServing.ServerCert.CertDirectory
	hc := &certs.HandlerCerts{Namespace: *namespace, CASecret: *handlerCA, ServerSecret: *handlerCerts}
	switch v1.EvictionStrategy(*evictionStrategy) {
	case v1.EvictionStrategyNone, v1.EvictionStrategyLiveMigrate, v1.EvictionStrategyExternal:
	default:
		component.Exit(fmt.Errorf("--eviction-strategy %q: want None, LiveMigrate or External", *evictionStrategy))
	}
	evictions := &webhook.Evictions{Default: v1.EvictionStrategy(*evictionStrategy)}
	component.Exit(run(component.SignalContext(), opts, limits, *namespace, *service, *secret, certDir, *webhookAddr, *certCheck, hc, evictions))
}

func run(ctx context.Context, opts *server.Options, limits admission.Limits, namespace, service, secret, certDir, webhookAddr string,
	certCheck time.Duration, handlerCerts *certs.HandlerCerts, evictions *webhook.Evictions) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	kube, err := component.KubeClient(cfg)
	if err != nil {
		component.Exit(err)
	}
	// Admission reads the instance types, preferences and revisions a VM names; a lookup
	// must leave the webhook (10 s) time to answer.
	limits.Instancetypes = instancetype.ClientGetter{Virt: versioned.NewForConfigOrDie(cfg), Kube: kube, Timeout: 5 * time.Second}
	certMgr := &certs.Manager{
		Kube: kube, Dynamic: dynamic.NewForConfigOrDie(cfg),
		Namespace: namespace, Secret: secret, Dir: certDir,
		DNSNames:          []string{service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local", service + "." + namespace},
		MutatingWebhook:   "virt-api-mutator",
		ValidatingWebhook: "virt-api-validator",
		APIService:        "v1.subresources.kubevirt.io",
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	// The certificate must exist before the aggregated server loads it.
	if err := certMgr.Ensure(ctx); err != nil {
		return err
	}
	handlerCerts.Kube = kube
	if err := handlerCerts.Ensure(ctx); err != nil {
		return err
	}
	opts.SecureServing.ServerCert.CertKey.CertFile = certMgr.CertFile()
	opts.SecureServing.ServerCert.CertKey.KeyFile = certMgr.KeyFile()
	apiServer, err := server.New(opts, &subresources.Handler{
		Virt: versioned.NewForConfigOrDie(cfg), Kube: kube, Namespace: namespace, HandlerTLS: handlerCerts.Client,
		Instancetypes: limits.Instancetypes,
	})
	if err != nil {
		return err
	}
	klog.InfoS("virt-api serving", "subresources", opts.SecureServing.BindPort, "webhooks", webhookAddr, "maxEmptyDiskCapacity", limits.MaxEmptyDiskCapacity.String())
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { certMgr.Run(ctx, certCheck); return nil })
	g.Go(func() error { handlerCerts.Run(ctx, certCheck); return nil })
	evictions.Kube, evictions.Virt = kube, versioned.NewForConfigOrDie(cfg)
	g.Go(func() error { return webhook.Serve(ctx, webhookAddr, certMgr.GetCertificate, limits, evictions) })
	g.Go(func() error { return apiServer.PrepareRun().RunWithContext(ctx) })
	return g.Wait()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
