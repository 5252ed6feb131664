package hooks

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vmctl/vmctl/api/hooks/info"
	"github.com/vmctl/vmctl/api/hooks/v1alpha1"
	"github.com/vmctl/vmctl/api/hooks/v1alpha2"
	"github.com/vmctl/vmctl/api/hooks/v1alpha3"
)

// Hooks are what a sidecar does at each hook point; nil answers Unimplemented.
type Hooks struct {
	// OnDefineDomain returns the domain to define, given the one about to be defined and the
	// instance, as JSON.
	OnDefineDomain func(ctx context.Context, domainXML, vmi []byte) ([]byte, error)
	// PreCloudInitIso returns the cloud-init data to write (KubeVirt's CloudInitData JSON),
	// given the data about to be written and the instance.
	PreCloudInitIso func(ctx context.Context, data, vmi []byte) ([]byte, error)
}

// NewServer serves self and, for each of its versions, the Callbacks service whose hook
// points are h's. Shutdown, in v1alpha3, does nothing: the launcher pod stops its sidecars
// after the guest. Serve it on a socket in SocketsDir.
func NewServer(self *Info, h Hooks) *grpc.Server {
	s := grpc.NewServer()
	info.RegisterInfoServer(s, infoServer{self: self})
	for _, v := range self.GetVersions() {
		switch v {
		case "v1alpha1":
			v1alpha1.RegisterCallbacksServer(s, v1alpha1Server{h: h})
		case "v1alpha2":
			v1alpha2.RegisterCallbacksServer(s, v1alpha2Server{h: h})
		case "v1alpha3":
			v1alpha3.RegisterCallbacksServer(s, v1alpha3Server{h: h})
		}
	}
	return s
}

var errNoHook = status.Error(codes.Unimplemented, "this sidecar has no hook for that point")

type infoServer struct {
	info.UnimplementedInfoServer
	self *Info
}

func (s infoServer) Info(context.Context, *info.InfoParams) (*Info, error) { return s.self, nil }

type v1alpha1Server struct {
	v1alpha1.UnimplementedCallbacksServer
	h Hooks
}

func (s v1alpha1Server) OnDefineDomain(ctx context.Context, p *v1alpha1.OnDefineDomainParams) (*v1alpha1.OnDefineDomainResult, error) {
	if s.h.OnDefineDomain == nil {
		return nil, errNoHook
	}
	xml, err := s.h.OnDefineDomain(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha1.OnDefineDomainResult{DomainXML: xml}, err
}

type v1alpha2Server struct {
	v1alpha2.UnimplementedCallbacksServer
	h Hooks
}

func (s v1alpha2Server) OnDefineDomain(ctx context.Context, p *v1alpha2.OnDefineDomainParams) (*v1alpha2.OnDefineDomainResult, error) {
	if s.h.OnDefineDomain == nil {
		return nil, errNoHook
	}
	xml, err := s.h.OnDefineDomain(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha2.OnDefineDomainResult{DomainXML: xml}, err
}

func (s v1alpha2Server) PreCloudInitIso(ctx context.Context, p *v1alpha2.PreCloudInitIsoParams) (*v1alpha2.PreCloudInitIsoResult, error) {
	if s.h.PreCloudInitIso == nil {
		return nil, errNoHook
	}
	data, err := s.h.PreCloudInitIso(ctx, p.GetCloudInitData(), p.GetVmi())
	return &v1alpha2.PreCloudInitIsoResult{CloudInitData: data}, err
}

type v1alpha3Server struct {
	v1alpha3.UnimplementedCallbacksServer
	h Hooks
}

func (s v1alpha3Server) OnDefineDomain(ctx context.Context, p *v1alpha3.OnDefineDomainParams) (*v1alpha3.OnDefineDomainResult, error) {
	if s.h.OnDefineDomain == nil {
		return nil, errNoHook
	}
	xml, err := s.h.OnDefineDomain(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha3.OnDefineDomainResult{DomainXML: xml}, err
}

func (s v1alpha3Server) PreCloudInitIso(ctx context.Context, p *v1alpha3.PreCloudInitIsoParams) (*v1alpha3.PreCloudInitIsoResult, error) {
	if s.h.PreCloudInitIso == nil {
		return nil, errNoHook
	}
	data, err := s.h.PreCloudInitIso(ctx, p.GetCloudInitData(), p.GetVmi())
	return &v1alpha3.PreCloudInitIsoResult{CloudInitData: data}, err
}

func (v1alpha3Server) Shutdown(context.Context, *v1alpha3.ShutdownParams) (*v1alpha3.ShutdownResult, error) {
	return &v1alpha3.ShutdownResult{}, nil
}
