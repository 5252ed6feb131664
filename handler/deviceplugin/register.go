package deviceplugin

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// register announces a plugin serving resource on endpoint (a socket name in the kubelet's
// device-plugins directory) to the kubelet's Registration service at kubeletSocket, an
// absolute path. The kubelet then dials the endpoint back and opens ListAndWatch. It fails
// fast when the kubelet is not listening; the caller retries.
func register(ctx context.Context, kubeletSocket, endpoint, resource string, timeout time.Duration) error {
	// Unix sockets are local and protected by the directory's permissions, which is all the
	// kubelet's device plugin API offers, hence no transport security.
	conn, err := grpc.NewClient("unix://"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("kubelet registration client: %w", err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     endpoint,
		ResourceName: resource,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		return fmt.Errorf("register %s with the kubelet: %w", resource, err)
	}
	return nil
}
