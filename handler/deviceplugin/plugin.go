package deviceplugin

import (
	"context"
	"os"
	"time"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// plugin is the DevicePlugin gRPC service for one Device. It is stateless apart from its
// configuration, so the same value keeps serving across the servers run.go starts after
// kubelet restarts.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	dev   Device
	short string
	// done ends every ListAndWatch stream when Run's context ends, even if the kubelet keeps
	// the stream open.
	done <-chan struct{}
	// healthInterval is how often ListAndWatch checks that the host node still exists.
	healthInterval time.Duration
}

func newPlugin(dev Device, done <-chan struct{}, healthInterval time.Duration) *plugin {
	if dev.ContainerPath == "" {
		dev.ContainerPath = dev.HostPath
	}
	return &plugin{dev: dev, short: shortName(dev.Resource), done: done, healthInterval: healthInterval}
}

// GetDevicePluginOptions advertises no optional calls: allocation needs no preparation
// (PreStartContainer) and all IDs are alike (GetPreferredAllocation).
func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the device list, then resends it whenever the host node appears or
// disappears. The kubelet keeps this stream open for the plugin's lifetime and treats its end
// as the plugin going away, so it only returns when the stream or Run ends.
func (p *plugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	healthy := p.healthy()
	if err := stream.Send(p.list(healthy)); err != nil {
		return err
	}
	// Polling rather than inotify: device nodes live on devtmpfs, change rarely, and a stat
	// every few seconds is cheaper than getting inotify right across /dev remounts.
	ticker := time.NewTicker(p.healthInterval)
	defer ticker.Stop()
	for {
		select {
		case <-p.done:
			return nil
		case <-stream.Context().Done():
			return nil
		case <-ticker.C:
		}
		now := p.healthy()
		if now == healthy {
			continue
		}
		healthy = now
		klog.InfoS("device health changed", "resource", p.dev.Resource, "hostPath", p.dev.HostPath, "healthy", healthy)
		if err := stream.Send(p.list(healthy)); err != nil {
			return err
		}
	}
}

// healthy reports whether the host device node exists. Any stat error counts as unhealthy:
// the kubelet would fail to create a container with a node it cannot find either.
func (p *plugin) healthy() bool {
	_, err := os.Stat(p.dev.HostPath)
	return err == nil
}

// list is the full device list with every ID in the same health, since they all stand for
// the one host node.
func (p *plugin) list(healthy bool) *pluginapi.ListAndWatchResponse {
	health := pluginapi.Unhealthy
	if healthy {
		health = pluginapi.Healthy
	}
	devs := make([]*pluginapi.Device, p.dev.Count)
	for i := range devs {
		devs[i] = &pluginapi.Device{ID: deviceID(p.short, i), Health: health}
	}
	return &pluginapi.ListAndWatchResponse{Devices: devs}
}

// Allocate gives each container the host node once, however many IDs it was allocated:
// the IDs only count holders of the shared node.
func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{
		ContainerResponses: make([]*pluginapi.ContainerAllocateResponse, len(req.GetContainerRequests())),
	}
	for i := range resp.ContainerResponses {
		resp.ContainerResponses[i] = &pluginapi.ContainerAllocateResponse{
			Devices: []*pluginapi.DeviceSpec{{
				ContainerPath: p.dev.ContainerPath,
				HostPath:      p.dev.HostPath,
				Permissions:   "rw",
			}},
		}
	}
	return resp, nil
}

// GetPreferredAllocation is not advertised; an empty answer leaves the choice to the kubelet.
func (p *plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

// PreStartContainer is not advertised; there is nothing to prepare.
func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
