// Package server is virt-api's aggregated API server: k8s.io/apiserver's GenericAPIServer for
// TLS, delegated authentication (TokenReview, front-proxy request headers) and delegated
// authorization (SubjectAccessReview), with the subresources.kubevirt.io/v1 handlers on its
// non-go-restful mux. The handlers are plain http.Handlers because the group has no objects of
// its own, only verbs on kubevirt.io objects: REST storage would add a scheme and types for
// nothing. The apiserver's request-info resolver still parses every path, so RBAC sees
// `update virtualmachines/start` in subresources.kubevirt.io exactly as for a built-in resource.
package server

import (
	"fmt"
	"net"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"

	"github.com/vmctl/vmctl/virtapi/subresources"
)

// Options are the aggregated server's flags: the apiserver library's own option structs.
type Options struct {
	SecureServing  *genericoptions.SecureServingOptionsWithLoopback
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
}

// NewOptions serves on :8443. virt-api writes the serving pair from its Secret into
// --cert-dir and sets the cert and key files before New; the library reloads them when they
// change.
func NewOptions() *Options {
	o := &Options{
		SecureServing:  genericoptions.NewSecureServingOptions().WithLoopback(),
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
	}
	o.SecureServing.BindPort = 8443
	o.SecureServing.ServerCert.CertDirectory = "/var/run/virt-api/certs"
	// Probes are anonymous; everything else is authorized by the kube-apiserver.
	o.Authorization.AlwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}
	o.Authentication.RemoteKubeConfigFileOptional = true
	o.Authorization.RemoteKubeConfigFileOptional = true
	return o
}

// AddFlags adds the library's flags (--secure-port, --authentication-kubeconfig, ...).
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

// New builds the server; Run it with PrepareRun().RunWithContext(ctx).
func New(o *Options, h *subresources.Handler) (*genericapiserver.GenericAPIServer, error) {
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg := genericapiserver.NewConfig(serializer.NewCodecFactory(scheme))
	cfg.EffectiveVersion = utilcompatibility.DefaultBuildEffectiveVersion()
	cfg.SkipOpenAPIInstallation = true
	// A console or port-forward session lasts as long as the user stays: exempt it from the
	// request timeout (60 s) and the in-flight limits, as the kube-apiserver exempts exec,
	// attach and portforward.
	cfg.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), sets.NewString("console", "portforward"))
	if err := o.SecureServing.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	if err := o.Authentication.ApplyTo(&cfg.Authentication, cfg.SecureServing, nil); err != nil {
		return nil, fmt.Errorf("delegated authentication: %w", err)
	}
	if err := o.Authorization.ApplyTo(&cfg.Authorization); err != nil {
		return nil, fmt.Errorf("delegated authorization: %w", err)
	}
	s, err := cfg.Complete(nil).New("virt-api", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	installDiscovery(s)
	s.Handler.NonGoRestfulMux.HandlePrefix(groupVersionPath+"/", &router{h: h})
	return s, nil
}
