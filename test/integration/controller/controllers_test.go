package controller

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/controller/manager"
	"github.com/vmctl/vmctl/controller/migration"
)

// launcherImage is never pulled: no kubelet runs here.
const launcherImage = "registry.invalid/vmctl/virt-launcher:integration"

// migrationTargetTimeout is short: on the one-node test cluster a migration's target pod is
// never scheduled (it must not share its source's node), and the tests wait for that to fail.
// Not shorter: TestMigrationOneAtATimeAndCancel needs its first migration in flight (not yet
// failed) while it creates a second one and watches it wait, on a busy machine.
const migrationTargetTimeout = 20 * time.Second

// controllers is the virt-controller currently running in-process, without leader election.
var controllers struct {
	sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// startControllers runs a fresh manager (new informers, queues and expectations) until
// stopControllers.
func startControllers() error {
	cancel, done, err := runManager()
	if err != nil {
		return err
	}
	controllers.Lock()
	defer controllers.Unlock()
	controllers.cancel, controllers.done = cancel, done
	return nil
}

// runManager runs a virt-controller in-process, without leader election, until cancel; done
// closes once it has stopped. It has clients of its own, as a separate virt-controller process
// would: the tests' polling does not eat into its client-side rate limit.
func runManager() (cancel context.CancelFunc, done chan struct{}, err error) {
	kubeClient, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		return nil, nil, err
	}
	virtClient, err := versioned.NewForConfig(server.Config)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		err := manager.Run(ctx, kubeClient, virtClient, manager.Options{LauncherImage: launcherImage, Workers: 2,
			Migrations: migration.Options{TargetTimeout: migrationTargetTimeout}})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "controllers stopped: %v\n", err)
		}
	}()
	return cancel, done, nil
}

// stopControllers ends the running manager and waits for manager.Run to return. Like a
// virt-controller process that exits, a sync already under way may still land a request.
func stopControllers() {
	controllers.Lock()
	cancel, done := controllers.cancel, controllers.done
	controllers.cancel, controllers.done = nil, nil
	controllers.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// restartControllers replaces the running controllers with a fresh instance, as a crash or a
// rollout of virt-controller would. Tests calling it must not run in parallel with others.
func restartControllers(t *testing.T) {
	t.Helper()
	start := time.Now()
	stopControllers()
	if err := startControllers(); err != nil {
		t.Fatalf("restarting the controllers: %v", err)
	}
	t.Logf("controllers restarted (old instance stopped in %s)", time.Since(start).Round(time.Millisecond))
}
