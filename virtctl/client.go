package virtctl

import (
	"context"
	"fmt"
	"net/http"

	gws "github.com/gorilla/websocket"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport/websocket"

	"github.com/vmctl/vmctl/client/clientset/versioned"
)

// SubresourceGroupVersion is KubeVirt's subresource API, served by virt-api.
var SubresourceGroupVersion = schema.GroupVersion{Group: "subresources.kubevirt.io", Version: "v1"}

// clientLoader resolves kubectl's configuration: loading rules ($KUBECONFIG, ~/.kube/config,
// --kubeconfig) and the standard override flags (--context, --namespace, --server, ...).
type clientLoader struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func newClientLoader(flags *pflag.FlagSet) *clientLoader {
	cl := &clientLoader{rules: clientcmd.NewDefaultClientConfigLoadingRules(), overrides: &clientcmd.ConfigOverrides{}}
	flags.StringVar(&cl.rules.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	clientcmd.BindOverrideFlags(cl.overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	return cl
}

func (cl *clientLoader) config() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(cl.rules, cl.overrides)
}

// clients is what a command needs: its namespace and the API clients.
type clients struct {
	Namespace    string
	Config       *rest.Config
	Kube         kubernetes.Interface
	Virt         versioned.Interface
	Subresources rest.Interface
}

func (cl *clientLoader) clients() (*clients, error) {
	cc := cl.config()
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster configuration: %w", err)
	}
	c := &clients{Namespace: ns, Config: cfg}
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.Virt, err = versioned.NewForConfig(cfg); err != nil {
		return nil, err
	}
	sub := rest.CopyConfig(cfg)
	sub.GroupVersion = &SubresourceGroupVersion
	sub.APIPath = "/apis"
	sub.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.Subresources, err = rest.RESTClientFor(sub); err != nil {
		return nil, err
	}
	return c, nil
}

// openStream opens the websocket of a streaming subresource (console, vnc, portforward and
// its port and protocol: sub) of the namespace's resource name, speaking protocol. A round
// tripper holds the one connection it upgrades: one per stream.
func openStream(ctx context.Context, c *clients, namespace, resource, name, protocol string, sub ...string) (*gws.Conn, error) {
	rt, holder, err := websocket.RoundTripperFor(c.Config)
	if err != nil {
		return nil, err
	}
	u := c.Subresources.Get().Namespace(namespace).Resource(resource).Name(name).SubResource(sub...).URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	return websocket.Negotiate(rt, holder, req, protocol)
}
