// Command virt-controller runs the VirtualMachine, VirtualMachineInstance,
// VirtualMachineInstanceReplicaSet and node controllers, one elected replica at a time.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/controller/manager"
	"github.com/vmctl/vmctl/controller/migration"
	"github.com/vmctl/vmctl/controller/node"
	"github.com/vmctl/vmctl/controller/vmi"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/health"
)

func main() {
	kubeconfig := pflag.String("kubeconfig", "", "kubeconfig file (empty: in-cluster config)")
	opts := manager.Options{}
	pflag.StringVar(&opts.LauncherImage, "launcher-image", "", "image of the virt-launcher pods (empty: the image of this pod's init container "+manager.LauncherImageContainer+")")
	pflag.StringVar(&opts.SidecarShimImage, "sidecar-shim-image", "", "image that runs a hook sidecar's ConfigMap script when the sidecar names none (empty: sidecar-shim beside the launcher image, same tag)")
	pflag.StringVar(&opts.VirtiofsdImage, "virtiofsd-image", "", "image that runs each filesystem's virtiofsd (empty: virtiofsd beside the launcher image, same tag)")
	pflag.BoolVar(&opts.UseEmulation, "use-emulation", false, "run guests under QEMU's emulator (TCG): launcher pods request no /dev/kvm ("+layout.KVMResource+"), for nodes whose KVM is unusable (virt-handler needs --allow-emulation)")
	pflag.Int64Var(&opts.CPUAllocationRatio, "cpu-allocation-ratio", vmi.DefaultCPUAllocationRatio, "vCPUs per CPU a launcher pod requests when its instance requests no CPU (KubeVirt's cpuAllocationRatio): 10 requests 100m a vCPU")
	pflag.StringVar(&opts.VMStateStorageClass, "vm-state-storage-class", "", "storage class of the claims that keep VMs' persistent TPM and EFI state (KubeVirt's vmStateStorageClass; empty: the cluster's default)")
	containerDiskLimit := pflag.String("container-disk-limit", vmi.DefaultContainerDiskLimit.String(), "the most the guest's writes to one containerDisk (its overlay) may take in a launcher pod's emptyDir (part of its sizeLimit)")
	pflag.DurationVar(&opts.HeartbeatTimeout, "node-heartbeat-timeout", node.DefaultHeartbeatTimeout, "how long a node's virt-handler may miss heartbeats before the node takes no new instances (kubevirt.io/schedulable=false)")
	pflag.IntVar(&opts.Migrations.ParallelMigrationsPerCluster, "parallel-migrations-per-cluster", 5, "live migrations running at once in the cluster (KubeVirt's parallelMigrationsPerCluster)")
	pflag.IntVar(&opts.Migrations.ParallelOutboundMigrationsPerNode, "parallel-outbound-migrations-per-node", 2, "live migrations leaving one node at once (KubeVirt's parallelOutboundMigrationsPerNode)")
	pflag.DurationVar(&opts.Migrations.TargetTimeout, "migration-target-timeout", 5*time.Minute, "how long a migration's target pod may take to be scheduled, run and be prepared before the migration fails")
	defaults := migration.DefaultConfiguration()
	bandwidth := pflag.String("bandwidth-per-migration", defaults.BandwidthPerMigration.String(), "each live migration's transfer rate cap, per second, where no MigrationPolicy sets one (0: unlimited)")
	completionTimeout := pflag.Int64("completion-timeout-per-gib", *defaults.CompletionTimeoutPerGiB, "seconds per GiB of guest memory a live migration may take before it is aborted, where no MigrationPolicy sets it")
	autoConverge := pflag.Bool("allow-auto-converge", *defaults.AllowAutoConverge, "let QEMU slow down a guest that dirties memory faster than it is sent, where no MigrationPolicy says")
	unsafe := pflag.Bool("unsafe-migration-override", false, "have libvirt migrate even where it judges the migration unsafe, such as disks on storage the nodes share that it takes for a local file system (KubeVirt's unsafeMigrationOverride)")
	pflag.IntVar(&opts.Workers, "workers", 10, "concurrent syncs per controller: each VM waits on a few API round trips")
	qps := pflag.Float32("kube-api-qps", 500, "sustained requests per second to the API server (about 6 writes start a VM)")
	burst := pflag.Int("kube-api-burst", 1000, "request burst to the API server")
	healthAddr := pflag.String("health-addr", ":8080", "address of /healthz, /readyz and /metrics")
	pflag.BoolVar(&health.Profiling, "profiling", false, "serve Go profiles under /debug/pprof/ on --health-addr (unauthenticated: for benchmarks)")
	hostname, _ := os.Hostname()
	election := manager.Election{}
	pflag.StringVar(&election.Namespace, "lease-namespace", envOr("POD_NAMESPACE", "kubevirt"), "namespace of the leader election Lease")
	pflag.StringVar(&election.Identity, "identity", envOr("POD_NAME", hostname), "this replica's name in the Lease")
	component.ParseFlags()
	limit, err := resource.ParseQuantity(*containerDiskLimit)
	if err != nil {
		component.Exit(fmt.Errorf("--container-disk-limit: %w", err))
	}
	opts.ContainerDiskLimit = limit
	perMigration, err := resource.ParseQuantity(*bandwidth)
	if err != nil || perMigration.Sign() < 0 || *completionTimeout < 1 {
		component.Exit(fmt.Errorf("--bandwidth-per-migration must be a quantity of at least 0 and --completion-timeout-per-gib at least 1 (%v)", err))
	}
	opts.Migrations.Defaults = v1.MigrationConfiguration{BandwidthPerMigration: &perMigration, CompletionTimeoutPerGiB: completionTimeout, AllowAutoConverge: autoConverge, UnsafeMigrationOverride: unsafe}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		component.Exit(err)
	}
	config.QPS, config.Burst = *qps, *burst
	kube, err := component.KubeClient(config)
	if err != nil {
		component.Exit(err)
	}
	if opts.LauncherImage == "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		opts.LauncherImage, err = manager.LauncherImageFromPod(ctx, kube, election.Namespace, election.Identity)
		cancel()
		if err != nil {
			component.Exit(err)
		}
	}
	m, err := manager.New(kube, versioned.NewForConfigOrDie(config), opts)
	if err != nil {
		component.Exit(err)
	}
	g, ctx := errgroup.WithContext(component.SignalContext())
	g.Go(func() error { return health.Serve(ctx, *healthAddr, health.Check(m.Ready), health.Always, m.Metrics()) })
	g.Go(func() error { return m.RunElected(ctx, kube, election) })
	component.Exit(g.Wait())
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
