package deviceplugin

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// wait bounds every wait in these tests; the intervals below are milliseconds.
const wait = 5 * time.Second

func testConfig() config {
	return config{
		healthInterval:  10 * time.Millisecond,
		socketInterval:  10 * time.Millisecond,
		retryMin:        10 * time.Millisecond,
		retryMax:        50 * time.Millisecond,
		registerTimeout: time.Second,
	}
}

// socketDir is a fresh directory short enough for unix socket paths (108 bytes), which
// t.TempDir() under a long TMPDIR may not be.
func socketDir(t *testing.T) string {
	t.Helper()
	base := ""
	if len(os.TempDir()) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "dp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// fakeDevice creates a regular file standing in for a host device node.
func fakeDevice(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeKubelet is the kubelet's Registration service; it records Register requests.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	srv  *grpc.Server
	reqs chan *pluginapi.RegisterRequest
}

func startKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{srv: grpc.NewServer(), reqs: make(chan *pluginapi.RegisterRequest, 64)}
	pluginapi.RegisterRegistrationServer(k.srv, k)
	go k.srv.Serve(lis)
	t.Cleanup(k.stop)
	return k
}

func (k *fakeKubelet) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.reqs <- req
	return &pluginapi.Empty{}, nil
}

// stop stops serving and, the listener being net.Listen's, unlinks kubelet.sock.
func (k *fakeKubelet) stop() { k.srv.Stop() }

// expect returns the next n Register requests, keyed by resource name.
func (k *fakeKubelet) expect(t *testing.T, n int) map[string]*pluginapi.RegisterRequest {
	t.Helper()
	got := make(map[string]*pluginapi.RegisterRequest)
	timeout := time.After(wait)
	for range n {
		select {
		case req := <-k.reqs:
			got[req.ResourceName] = req
		case <-timeout:
			t.Fatalf("got %d of %d registrations", len(got), n)
		}
	}
	return got
}

// startRun runs the plugins until the test ends; the returned stop cancels Run and waits
// for it to return.
func startRun(t *testing.T, dir string, devices []Device) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, dir, devices, testConfig()) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Fatal("Run did not return after cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

// dialPlugin connects to a plugin socket the way the kubelet does.
func dialPlugin(t *testing.T, path string) pluginapi.DevicePluginClient {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginapi.NewDevicePluginClient(conn)
}

// waitUntil polls cond until it holds or the wait bound passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sockets lists the plugin sockets in dir.
func sockets(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "vmctl-*.sock"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
