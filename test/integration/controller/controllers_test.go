package controller

import (
	"context"

	"github.com/vmctl/vmctl/controller/manager"
)

// launcherImage is never pulled: no kubelet runs here.
const launcherImage = "registry.invalid/vmctl/virt-launcher:integration"

// runControllers runs virt-controller's controllers in-process, without leader election, until
// ctx ends.
func runControllers(ctx context.Context) error {
	return manager.Run(ctx, kube, virt, manager.Options{LauncherImage: launcherImage, Workers: 2})
}
