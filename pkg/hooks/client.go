package hooks

import (
	"context"
	"net"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn}, nil
}

// Close closes the client's connection.
func (c *Client) Close() error { return c.conn.Close() }

// Info asks the sidecar what it is and which hook points it subscribes to.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	out := &Info{}
	return out, c.conn.Invoke(ctx, "/kubevirt.hooks.info.Info/Info", &empty{}, out)
}

// OnDefineDomain hands the sidecar the domain about to be defined and returns its version
// of it, through the Callbacks service of version.
func (c *Client) OnDefineDomain(ctx context.Context, version string, p *DomainParams) ([]byte, error) {
	out := &DomainResult{}
	if err := c.conn.Invoke(ctx, "/kubevirt.hooks."+version+".Callbacks/OnDefineDomain", p, out); err != nil {
		return nil, err
	}
	return out.DomainXML, nil
}

// Version is the newest Callbacks version both sides speak, "" when none.
func (i *Info) Version() string {
	for _, v := range Versions {
		if slices.Contains(i.Versions, v) {
			return v
		}
	}
	return ""
}

// Subscribes reports whether the sidecar wants the hook point, and with which priority.
func (i *Info) Subscribes(point string) (int32, bool) {
	for _, hp := range i.HookPoints {
		if hp.Name == point {
			return hp.Priority, true
		}
	}
	return 0, false
}
