package hooks

import (
	"context"

	"google.golang.org/grpc"

	"github.com/vmctl/vmctl/api/hooks/info"
	"github.com/vmctl/vmctl/api/hooks/v1alpha1"
	"github.com/vmctl/vmctl/api/hooks/v1alpha2"
	"github.com/vmctl/vmctl/api/hooks/v1alpha3"
)

// DomainHook is a sidecar's OnDefineDomain: the domain to define, given the one about to be
// defined and the instance as JSON.
type DomainHook func(ctx context.Context, domainXML, vmi []byte) ([]byte, error)

// NewServer serves self and, for each of its versions, the Callbacks service whose
// OnDefineDomain is hook. PreCloudInitIso answers Unimplemented (virt-handler does not call
// it); Shutdown, in v1alpha3, does nothing: the launcher pod stops its sidecars after the
// guest. Serve it on a socket in SocketsDir.
func NewServer(self *Info, hook DomainHook) *grpc.Server {
	s := grpc.NewServer()
	info.RegisterInfoServer(s, infoServer{self: self})
	for _, v := range self.GetVersions() {
		switch v {
		case "v1alpha1":
			v1alpha1.RegisterCallbacksServer(s, v1alpha1Server{hook: hook})
		case "v1alpha2":
			v1alpha2.RegisterCallbacksServer(s, v1alpha2Server{hook: hook})
		case "v1alpha3":
			v1alpha3.RegisterCallbacksServer(s, v1alpha3Server{hook: hook})
		}
	}
	return s
}

type infoServer struct {
	info.UnimplementedInfoServer
	self *Info
}

func (s infoServer) Info(context.Context, *info.InfoParams) (*Info, error) { return s.self, nil }

type v1alpha1Server struct {
	v1alpha1.UnimplementedCallbacksServer
	hook DomainHook
}

func (s v1alpha1Server) OnDefineDomain(ctx context.Context, p *v1alpha1.OnDefineDomainParams) (*v1alpha1.OnDefineDomainResult, error) {
	xml, err := s.hook(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha1.OnDefineDomainResult{DomainXML: xml}, err
}

type v1alpha2Server struct {
	v1alpha2.UnimplementedCallbacksServer
	hook DomainHook
}

func (s v1alpha2Server) OnDefineDomain(ctx context.Context, p *v1alpha2.OnDefineDomainParams) (*v1alpha2.OnDefineDomainResult, error) {
	xml, err := s.hook(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha2.OnDefineDomainResult{DomainXML: xml}, err
}

type v1alpha3Server struct {
	v1alpha3.UnimplementedCallbacksServer
	hook DomainHook
}

func (s v1alpha3Server) OnDefineDomain(ctx context.Context, p *v1alpha3.OnDefineDomainParams) (*v1alpha3.OnDefineDomainResult, error) {
	xml, err := s.hook(ctx, p.GetDomainXML(), p.GetVmi())
	return &v1alpha3.OnDefineDomainResult{DomainXML: xml}, err
}

func (v1alpha3Server) Shutdown(context.Context, *v1alpha3.ShutdownParams) (*v1alpha3.ShutdownResult, error) {
	return &v1alpha3.ShutdownResult{}, nil
}
