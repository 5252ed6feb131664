package deviceplugin

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func testDevices(t *testing.T) []Device {
	devDir := t.TempDir()
	return []Device{
		{Resource: "devices.kubevirt.io/kvm", HostPath: fakeDevice(t, devDir, "kvm"), Count: 3},
		{Resource: "devices.kubevirt.io/tun", HostPath: fakeDevice(t, devDir, "tun"), Count: 2},
	}
}

// checkRegistrations checks that every device registered with the right request.
func checkRegistrations(t *testing.T, got map[string]*pluginapi.RegisterRequest) {
	t.Helper()
	want := map[string]string{
		"devices.kubevirt.io/kvm": "vmctl-kvm.sock",
		"devices.kubevirt.io/tun": "vmctl-tun.sock",
	}
	if len(got) != len(want) {
		t.Fatalf("registered %d resources, want %d", len(got), len(want))
	}
	for resource, endpoint := range want {
		req := got[resource]
		switch {
		case req == nil:
			t.Errorf("%s: not registered", resource)
		case req.Version != pluginapi.Version || req.Endpoint != endpoint:
			t.Errorf("%s: registered version %q endpoint %q, want %q %q", resource, req.Version, req.Endpoint, pluginapi.Version, endpoint)
		case req.Options == nil || req.Options.PreStartRequired || req.Options.GetPreferredAllocationAvailable:
			t.Errorf("%s: options %v, want empty", resource, req.Options)
		}
	}
}

func TestRunRegisters(t *testing.T) {
	dir := socketDir(t)
	k := startKubelet(t, dir)
	startRun(t, dir, testDevices(t))
	checkRegistrations(t, k.expect(t, 2))
}

// The kubelet may start after virt-handler: registration is retried until it is up.
func TestRunWaitsForKubelet(t *testing.T) {
	dir := socketDir(t)
	startRun(t, dir, testDevices(t))
	waitUntil(t, "plugin sockets", func() bool { return len(sockets(t, dir)) == 2 })
	k := startKubelet(t, dir)
	checkRegistrations(t, k.expect(t, 2))
}

// A socket left behind by a handler that crashed is replaced.
func TestRunReplacesStaleSocket(t *testing.T) {
	dir := socketDir(t)
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "vmctl-kvm.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	lis.SetUnlinkOnClose(false)
	lis.Close()
	k := startKubelet(t, dir)
	startRun(t, dir, testDevices(t))
	checkRegistrations(t, k.expect(t, 2))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := dialPlugin(t, filepath.Join(dir, "vmctl-kvm.sock")).GetDevicePluginOptions(ctx, &pluginapi.Empty{}); err != nil {
		t.Fatal(err)
	}
}

func TestKubeletRestart(t *testing.T) {
	dir := socketDir(t)
	k := startKubelet(t, dir)
	startRun(t, dir, testDevices(t))
	k.expect(t, 2)

	kvmSock := filepath.Join(dir, "vmctl-kvm.sock")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	stream, err := dialPlugin(t, kvmSock).ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	recvList(t, stream, "kvm", 3, pluginapi.Healthy)

	// What a restarting kubelet does: go away, delete the plugin sockets, come back.
	k.stop()
	for _, s := range sockets(t, dir) {
		if err := os.Remove(s); err != nil {
			t.Fatal(err)
		}
	}
	k = startKubelet(t, dir)
	checkRegistrations(t, k.expect(t, 2))

	// The old server is stopped, ending its stream, and a new one serves on a new socket.
	// (Not checked by inode: tmpfs hands the freed inode number straight to the new socket.)
	if _, err := stream.Recv(); err == nil {
		t.Error("ListAndWatch stream on the deleted socket still open")
	}
	stream, err = dialPlugin(t, kvmSock).ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	recvList(t, stream, "kvm", 3, pluginapi.Healthy)
}

func TestRunCancel(t *testing.T) {
	dir := socketDir(t)
	k := startKubelet(t, dir)
	stop := startRun(t, dir, testDevices(t))
	k.expect(t, 2)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	stream, err := dialPlugin(t, filepath.Join(dir, "vmctl-kvm.sock")).ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	recvList(t, stream, "kvm", 3, pluginapi.Healthy)

	stop() // fails the test unless Run returns nil in time
	if s := sockets(t, dir); len(s) != 0 {
		t.Errorf("sockets left behind: %v", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "kubelet.sock")); err != nil {
		t.Errorf("kubelet socket: %v", err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Error("ListAndWatch stream still open after Run returned")
	}
}

func TestRunRejects(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the dir to pass to Run
		devices func(t *testing.T) []Device
		wantErr string
	}{
		{
			name:    "missing dir",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") },
			devices: testDevices,
			wantErr: "no such file",
		},
		{
			name: "dir is a file",
			setup: func(t *testing.T, dir string) string {
				return fakeDevice(t, dir, "file")
			},
			devices: testDevices,
			wantErr: "not a directory",
		},
		{
			name: "file in the way",
			setup: func(t *testing.T, dir string) string {
				fakeDevice(t, dir, "vmctl-tun.sock")
				return dir
			},
			devices: testDevices,
			wantErr: "devices.kubevirt.io/tun",
		},
		{
			name:  "invalid device",
			setup: func(t *testing.T, dir string) string { return dir },
			devices: func(t *testing.T) []Device {
				return []Device{{Resource: "devices.kubevirt.io/kvm", HostPath: "/dev/kvm"}}
			},
			wantErr: "not positive",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := socketDir(t)
			runDir := tt.setup(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			err := run(ctx, runDir, tt.devices(t), testConfig())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Run = %v, want error containing %q", err, tt.wantErr)
			}
			// In "file in the way" the kvm socket was created first; it must be gone again.
			if s := sockets(t, dir); len(s) > 1 || (len(s) == 1 && filepath.Base(s[0]) != "vmctl-tun.sock") {
				t.Errorf("sockets left behind: %v", s)
			}
		})
	}
}

func TestRunNoDevices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := Run(ctx, "/nonexistent", nil); err != nil {
		t.Fatalf("Run with no devices = %v", err)
	}
}
