package hooks

import (
	"context"
	"fmt"
	"net"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/vmctl/vmctl/api/hooks/info"
	"github.com/vmctl/vmctl/api/hooks/v1alpha1"
	"github.com/vmctl/vmctl/api/hooks/v1alpha2"
	"github.com/vmctl/vmctl/api/hooks/v1alpha3"
)

type (
	// Info is what a sidecar says of itself (kubevirt.hooks.info.InfoResult).
	Info = info.InfoResult
	// HookPoint is a point a sidecar subscribes to, with its priority (higher first).
	HookPoint = info.HookPoint
)

// The hook points virt-handler calls (KubeVirt's names).
const (
	OnDefineDomain  = "OnDefineDomain"
	PreCloudInitIso = "PreCloudInitIso"
)

// Versions are the Callbacks services this side speaks, newest first; their OnDefineDomain
// is the same on the wire.
var Versions = []string{"v1alpha3", "v1alpha2", "v1alpha1"}

// Client calls one sidecar.
type Client struct{ conn *grpc.ClientConn }

// NewClient talks over the connections dial makes: the caller decides how the socket is
// reached (virt-handler opens it without following links).
func NewClient(dial func(ctx context.Context) (net.Conn, error)) (*Client, error) {
	conn, err := grpc.NewClient("passthrough:///hook-sidecar",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }))
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn}, nil
}

// Close closes the client's connection.
func (c *Client) Close() error { return c.conn.Close() }

// Info asks the sidecar what it is and which hook points it subscribes to.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	return info.NewInfoClient(c.conn).Info(ctx, &info.InfoParams{})
}

// OnDefineDomain hands the sidecar the domain about to be defined and the instance as JSON,
// through the Callbacks service of version, and returns the sidecar's domain.
func (c *Client) OnDefineDomain(ctx context.Context, version string, domainXML, vmi []byte) ([]byte, error) {
	switch version {
	case "v1alpha3":
		out, err := v1alpha3.NewCallbacksClient(c.conn).OnDefineDomain(ctx, &v1alpha3.OnDefineDomainParams{DomainXML: domainXML, Vmi: vmi})
		return out.GetDomainXML(), err
	case "v1alpha2":
		out, err := v1alpha2.NewCallbacksClient(c.conn).OnDefineDomain(ctx, &v1alpha2.OnDefineDomainParams{DomainXML: domainXML, Vmi: vmi})
		return out.GetDomainXML(), err
	case "v1alpha1":
		out, err := v1alpha1.NewCallbacksClient(c.conn).OnDefineDomain(ctx, &v1alpha1.OnDefineDomainParams{DomainXML: domainXML, Vmi: vmi})
		return out.GetDomainXML(), err
	}
	return nil, fmt.Errorf("hook version %q: want one of %v", version, Versions)
}

// CloudInit is what a sidecar's PreCloudInitIso returns: the cloud-init data to write, as
// KubeVirt's CloudInitData JSON, or from older sidecars only a CloudInitNoCloudSource.
type CloudInit struct {
	Data, NoCloudSource []byte
}

// PreCloudInitIso hands the sidecar the cloud-init data about to be written (KubeVirt's
// CloudInitData JSON) and the instance as JSON, through the Callbacks service of version
// (v1alpha2 and later), and returns what the sidecar wants written instead.
func (c *Client) PreCloudInitIso(ctx context.Context, version string, data, vmi []byte) (CloudInit, error) {
	switch version {
	case "v1alpha3":
		out, err := v1alpha3.NewCallbacksClient(c.conn).PreCloudInitIso(ctx, &v1alpha3.PreCloudInitIsoParams{CloudInitData: data, Vmi: vmi})
		return CloudInit{Data: out.GetCloudInitData(), NoCloudSource: out.GetCloudInitNoCloudSource()}, err
	case "v1alpha2":
		out, err := v1alpha2.NewCallbacksClient(c.conn).PreCloudInitIso(ctx, &v1alpha2.PreCloudInitIsoParams{CloudInitData: data, Vmi: vmi})
		return CloudInit{Data: out.GetCloudInitData(), NoCloudSource: out.GetCloudInitNoCloudSource()}, err
	}
	return CloudInit{}, fmt.Errorf("hook version %q has no PreCloudInitIso", version)
}

// Version is the newest Callbacks version both sides speak, "" when none.
func Version(i *Info) string {
	for _, v := range Versions {
		if slices.Contains(i.GetVersions(), v) {
			return v
		}
	}
	return ""
}

// Subscribes reports whether the sidecar wants the hook point, and with which priority.
func Subscribes(i *Info, point string) (int32, bool) {
	for _, hp := range i.GetHookPoints() {
		if hp.GetName() == point {
			return hp.GetPriority(), true
		}
	}
	return 0, false
}
