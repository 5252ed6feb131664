package deviceplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// config holds Run's timings; tests shorten them.
type config struct {
	// healthInterval is how often a ListAndWatch stream checks the host device node.
	healthInterval time.Duration
	// socketInterval is how often a plugin checks that the kubelet has not deleted its socket.
	socketInterval time.Duration
	// retryMin and retryMax bound the doubling delay between failed registrations or listens.
	retryMin, retryMax time.Duration
	// registerTimeout bounds one Register call.
	registerTimeout time.Duration
}

func defaultConfig() config {
	return config{
		healthInterval:  5 * time.Second,
		socketInterval:  5 * time.Second,
		retryMin:        time.Second,
		retryMax:        30 * time.Second,
		registerTimeout: 10 * time.Second,
	}
}

// Run serves one plugin per device from dir (the kubelet's device-plugins directory, e.g.
// /var/lib/kubelet/device-plugins, holding kubelet.sock) and registers each with the kubelet.
// It re-serves and re-registers when the kubelet restarts (the kubelet deletes the plugin
// sockets in dir when it starts), and returns when ctx ends, removing its sockets.
//
// Run fails only on configuration errors or if dir cannot hold the sockets at all; a kubelet
// that is not up yet, or goes away, is waited for. With no devices Run returns at once.
func Run(ctx context.Context, dir string, devices []Device) error {
	return run(ctx, dir, devices, defaultConfig())
}

func run(ctx context.Context, dir string, devices []Device, cfg config) error {
	if len(devices) == 0 {
		return nil
	}
	// The registration client dials "unix://"+path, which needs an absolute path.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("device plugin dir: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("device plugin dir: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("device plugin dir %s is not a directory", dir)
	}
	if err := validate(dir, devices); err != nil {
		return err
	}

	// Listen on every socket before starting any plugin so that an unusable dir (read-only,
	// wrong permissions) is reported to the caller instead of being retried forever.
	sockets := make([]*socket, len(devices))
	for i, d := range devices {
		s, err := listen(filepath.Join(dir, socketName(d.Resource)))
		if err != nil {
			for _, s := range sockets[:i] {
				s.remove()
			}
			return fmt.Errorf("device plugin for %s: %w", d.Resource, err)
		}
		sockets[i] = s
	}

	var wg sync.WaitGroup
	for i, d := range devices {
		s := &server{
			plugin:        newPlugin(d, ctx.Done(), cfg.healthInterval),
			kubeletSocket: filepath.Join(dir, "kubelet.sock"),
			cfg:           cfg,
		}
		wg.Go(func() { s.run(ctx, sockets[i]) })
	}
	wg.Wait()
	return nil
}

// server keeps one plugin served and registered across kubelet restarts.
type server struct {
	plugin        *plugin
	kubeletSocket string
	cfg           config
}

// run serves on sock until ctx ends, starting over on a fresh socket each time the kubelet
// deletes the current one.
func (s *server) run(ctx context.Context, sock *socket) {
	resource := s.plugin.dev.Resource
	for {
		s.serve(ctx, sock)
		if ctx.Err() != nil {
			return
		}
		klog.InfoS("device plugin socket gone, serving again", "resource", resource, "socket", sock.path)
		if sock = s.relisten(ctx, sock.path); sock == nil {
			return
		}
	}
}

// serve runs a gRPC server on sock and registers it with the kubelet, retrying until that
// succeeds. It returns, with the server stopped and the socket removed, when ctx ends, when
// the socket is deleted or replaced (a kubelet restart), or when serving fails.
func (s *server) serve(ctx context.Context, sock *socket) {
	resource := s.plugin.dev.Resource
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, s.plugin)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sock.lis) }()
	defer func() {
		// Stop ends the kubelet's ListAndWatch stream too; a new kubelet opens its own after
		// the next registration.
		srv.Stop()
		<-served
		sock.remove()
	}()

	check := time.NewTicker(s.cfg.socketInterval)
	defer check.Stop()
	retry := time.NewTimer(0) // register right away
	defer retry.Stop()
	delay := s.cfg.retryMin
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-served:
			klog.ErrorS(err, "device plugin stopped serving", "resource", resource)
			served <- err // for the deferred wait
			return
		case <-check.C:
			if sock.gone() {
				return
			}
		case <-retry.C:
			err := register(ctx, s.kubeletSocket, filepath.Base(sock.path), resource, s.cfg.registerTimeout)
			if err == nil {
				klog.InfoS("registered device plugin with the kubelet", "resource", resource, "endpoint", filepath.Base(sock.path))
				continue
			}
			if ctx.Err() != nil {
				return
			}
			// Expected while the kubelet starts; its new socket appears shortly.
			klog.ErrorS(err, "device plugin registration failed, retrying", "resource", resource, "retryIn", delay)
			retry.Reset(delay)
			delay = min(2*delay, s.cfg.retryMax)
		}
	}
}

// relisten creates the socket at path again, retrying with backoff: a failure here follows a
// kubelet restart, so it is likely transient. It returns nil once ctx ends.
func (s *server) relisten(ctx context.Context, path string) *socket {
	delay := s.cfg.retryMin
	for {
		sock, err := listen(path)
		if err == nil {
			return sock
		}
		klog.ErrorS(err, "device plugin listen failed, retrying", "resource", s.plugin.dev.Resource, "socket", path, "retryIn", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, s.cfg.retryMax)
	}
}
