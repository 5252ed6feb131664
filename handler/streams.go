package handler

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// StreamServer serves virt-api's streams to this node's guests, and its lifecycle operations
// on them (see package handlerapi), over mutual TLS, with the material Certs returns at each
// handshake (so a rotation needs no restart).
type StreamServer struct {
	Controller *Controller
	Certs      func(context.Context) (handlerapi.Material, error)

	mu       sync.Mutex
	consoles map[string]*handlerapi.WebsocketStream // per instance: the attached console
	busy     map[string]bool                        // per instance: a lifecycle operation runs
}

var upgrader = websocket.Upgrader{
	Subprotocols: []string{handlerapi.ConsoleProtocol},
	// Only virt-api reaches this server (mutual TLS); a browser origin means nothing here.
	CheckOrigin: func(*http.Request) bool { return true },
}

// Serve listens on addr until ctx ends.
func (s *StreamServer) Serve(ctx context.Context, addr string) error {
	base := &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			m, err := s.Certs(hello.Context())
			if err != nil {
				klog.ErrorS(err, "stream server certificates")
				return nil, err
			}
			return handlerapi.ServerConfig(m)
		},
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	klog.InfoS("serving streams", "addr", addr)
	if err := srv.Serve(tls.NewListener(l, base)); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// routes are the server's paths (package handlerapi).
func (s *StreamServer) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc(handlerapi.ConsolePattern, s.console)
	mux.HandleFunc(handlerapi.VNCPattern, s.vnc)
	mux.HandleFunc(handlerapi.ScreenshotPattern, s.screenshot)
	mux.HandleFunc(handlerapi.PortForwardPattern, s.portForward)
	for _, op := range handlerapi.Operations {
		mux.HandleFunc(handlerapi.LifecyclePattern(op), s.lifecycle(op))
	}
	for _, q := range handlerapi.Queries {
		mux.HandleFunc(handlerapi.QueryPattern(q), s.guestQuery(q))
	}
	return mux
}

// console relays the guest's serial port. A new console of an instance replaces the one
// attached, as QEMU serves one client at a time (KubeVirt does the same).
func (s *StreamServer) console(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	key := namespace + "/" + name
	s.detach(key, nil, "replaced by a new console connection")
	// A refusal is an HTTP status; a guest that is still starting is waited for after the
	// upgrade, so no proxy on the way times the wait out.
	serial, err := s.Controller.dialConsole(r.Context(), namespace, name)
	var refused *streamError
	if errors.As(err, &refused) {
		http.Error(w, err.Error(), refused.status)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		if serial != nil {
			serial.Close()
		}
		return // the upgrader has answered
	}
	stream := &handlerapi.WebsocketStream{Conn: ws}
	if serial == nil {
		if serial, err = s.Controller.waitConsole(r.Context(), namespace, name); err != nil {
			_ = stream.Close("console: " + err.Error())
			return
		}
	}
	defer serial.Close()
	s.attach(key, stream)
	klog.InfoS("console attached", "vmi", key)
	err = handlerapi.Splice(stream, serial)
	msg := "console closed"
	if err != nil {
		msg = "console: " + err.Error()
	}
	s.detach(key, stream, msg)
	klog.InfoS("console detached", "vmi", key, "err", err)
}

func (s *StreamServer) attach(key string, stream *handlerapi.WebsocketStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consoles == nil {
		s.consoles = map[string]*handlerapi.WebsocketStream{}
	}
	s.consoles[key] = stream
}

// detach closes key's console, or only stream when it is still the attached one (nil: any).
func (s *StreamServer) detach(key string, stream *handlerapi.WebsocketStream, reason string) {
	s.mu.Lock()
	cur := s.consoles[key]
	if cur != nil && (stream == nil || cur == stream) {
		delete(s.consoles, key)
	}
	s.mu.Unlock()
	if stream == nil {
		stream = cur
	}
	if stream != nil {
		_ = stream.Close(reason)
	}
}
