package deviceplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// recvList receives the next device list and checks it has count devices, all with health.
func recvList(t *testing.T, stream grpc.ServerStreamingClient[pluginapi.ListAndWatchResponse], short string, count int, health string) {
	t.Helper()
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("ListAndWatch: %v", err)
	}
	if len(resp.Devices) != count {
		t.Fatalf("ListAndWatch sent %d devices, want %d", len(resp.Devices), count)
	}
	for i, d := range resp.Devices {
		if want := fmt.Sprintf("%s-%d", short, i); d.ID != want || d.Health != health {
			t.Fatalf("device %d = %s/%s, want %s/%s", i, d.ID, d.Health, want, health)
		}
	}
}

func TestPluginServes(t *testing.T) {
	dir, devDir := socketDir(t), t.TempDir()
	hostPath := fakeDevice(t, devDir, "kvm")
	k := startKubelet(t, dir)
	startRun(t, dir, []Device{{Resource: "devices.kubevirt.io/kvm", HostPath: hostPath, ContainerPath: "/dev/kvm", Count: 3}})
	k.expect(t, 1)
	client := dialPlugin(t, filepath.Join(dir, "vmctl-kvm.sock"))

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	opts, err := client.GetDevicePluginOptions(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.PreStartRequired || opts.GetPreferredAllocationAvailable {
		t.Errorf("options = %v, want none", opts)
	}

	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	recvList(t, stream, "kvm", 3, pluginapi.Healthy)

	t.Run("Allocate", func(t *testing.T) {
		tests := []struct {
			name       string
			containers [][]string
		}{
			{"one id", [][]string{{"kvm-0"}}},
			{"several ids", [][]string{{"kvm-0", "kvm-1", "kvm-2"}}},
			{"two containers", [][]string{{"kvm-0"}, {"kvm-1", "kvm-2"}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req := &pluginapi.AllocateRequest{}
				for _, ids := range tt.containers {
					req.ContainerRequests = append(req.ContainerRequests, &pluginapi.ContainerAllocateRequest{DevicesIds: ids})
				}
				resp, err := client.Allocate(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.ContainerResponses) != len(tt.containers) {
					t.Fatalf("%d container responses, want %d", len(resp.ContainerResponses), len(tt.containers))
				}
				for i, cr := range resp.ContainerResponses {
					if len(cr.Devices) != 1 {
						t.Fatalf("container %d: %d device specs, want 1", i, len(cr.Devices))
					}
					d := cr.Devices[0]
					if d.HostPath != hostPath || d.ContainerPath != "/dev/kvm" || d.Permissions != "rw" {
						t.Errorf("container %d: spec = %v", i, d)
					}
					if len(cr.Mounts) != 0 || len(cr.Envs) != 0 {
						t.Errorf("container %d: unexpected mounts or envs: %v", i, cr)
					}
				}
			})
		}
	})

	if _, err := client.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{}); err != nil {
		t.Errorf("GetPreferredAllocation: %v", err)
	}
	if _, err := client.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{}); err != nil {
		t.Errorf("PreStartContainer: %v", err)
	}

	// The device node disappears and comes back.
	if err := os.Remove(hostPath); err != nil {
		t.Fatal(err)
	}
	recvList(t, stream, "kvm", 3, pluginapi.Unhealthy)
	fakeDevice(t, devDir, "kvm")
	recvList(t, stream, "kvm", 3, pluginapi.Healthy)
}

func TestContainerPathDefaultsToHostPath(t *testing.T) {
	p := newPlugin(Device{Resource: "example.com/tun", HostPath: "/dev/net/tun", Count: 1}, nil, 0)
	resp, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"tun-0"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.ContainerResponses[0].Devices[0]; d.ContainerPath != "/dev/net/tun" || d.HostPath != "/dev/net/tun" {
		t.Errorf("spec = %v, want /dev/net/tun on both sides", d)
	}
}
