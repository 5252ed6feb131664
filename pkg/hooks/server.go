package hooks

import (
	"context"

	"google.golang.org/grpc"
)

// DomainHook is a sidecar's OnDefineDomain.
type DomainHook func(ctx context.Context, p *DomainParams) ([]byte, error)

// NewServer serves info and, for each of info's versions, the Callbacks service whose
// OnDefineDomain is hook (Shutdown, in v1alpha3, does nothing: the launcher pod stops its
// sidecars after the guest). Serve it on the socket in SocketsDir.
func NewServer(info Info, hook DomainHook) *grpc.Server {
	s := grpc.NewServer(grpc.ForceServerCodec(codec{}))
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "kubevirt.hooks.info.Info",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Info", Handler: unary("/kubevirt.hooks.info.Info/Info", func() *empty { return &empty{} },
			func(context.Context, *empty) (message, error) { return &info, nil })}},
	}, struct{}{})
	for _, v := range info.Versions {
		name := "kubevirt.hooks." + v + ".Callbacks"
		methods := []grpc.MethodDesc{{MethodName: "OnDefineDomain", Handler: unary("/"+name+"/OnDefineDomain", func() *DomainParams { return &DomainParams{} },
			func(ctx context.Context, p *DomainParams) (message, error) {
				xml, err := hook(ctx, p)
				if err != nil {
					return nil, err
				}
				return &DomainResult{DomainXML: xml}, nil
			})}}
		if v == "v1alpha3" {
			methods = append(methods, grpc.MethodDesc{MethodName: "Shutdown", Handler: unary("/"+name+"/Shutdown", func() *empty { return &empty{} },
				func(context.Context, *empty) (message, error) { return &empty{}, nil })})
		}
		s.RegisterService(&grpc.ServiceDesc{ServiceName: name, HandlerType: (*any)(nil), Methods: methods}, struct{}{})
	}
	return s
}

// unary adapts a typed handler to grpc's method handler, interceptors included.
func unary[In message](method string, newIn func() In, h func(context.Context, In) (message, error)) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := newIn()
		if err := dec(in); err != nil {
			return nil, err
		}
		if interceptor == nil {
			return h(ctx, in)
		}
		return interceptor(ctx, in, &grpc.UnaryServerInfo{FullMethod: method}, func(ctx context.Context, req any) (any, error) {
			return h(ctx, req.(In))
		})
	}
}
