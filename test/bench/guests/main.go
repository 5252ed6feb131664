// Command bench-guests measures real guests on the local cluster's real node (make bench,
// scenarios a and b): how long VMs take from creation to Running and to their guests' marker,
// created at a steady pace, directly and through a vmctl Deployment, next to floors measured in
// the same run (the same launcher pods, booting the same guest with QEMU started by the pod
// itself: floor.go); each launcher pod's CPU until its guest's marker and its memory after, by
// process (split.go); the API writes per VM of every component (from the API server's audit
// log); and the CPU seconds per VM of each component.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
)

type options struct {
	vms           int
	interval      time.Duration
	guestMemory   string
	vmctlReplicas int
	kubeconfig    string
	cluster       string
	out           string
	timeout       time.Duration
	markerStall   time.Duration
}

const floorNamespace = "bench-floor"

// ownNamespace says whether the bench made a namespace: all of them start with "bench-".
func ownNamespace(namespace string) bool { return strings.HasPrefix(namespace, "bench-") }

// userAgent marks the bench's own requests, which the write counts leave out.
const userAgent = "vmctl-bench"

func main() {
	var o options
	pflag.IntVar(&o.vms, "vms", 100, "VMs (and floor pods) to create on the real node (0 skips that scenario)")
	pflag.DurationVar(&o.interval, "interval", 100*time.Millisecond, "pause between two creations")
	pflag.StringVar(&o.guestMemory, "guest-memory", "80Mi", "each guest's memory: the least the test guest boots with reliably")
	pflag.IntVar(&o.vmctlReplicas, "vmctl-replicas", 100, "replicas of the vmctl Deployment (0 skips that scenario)")
	pflag.StringVar(&o.kubeconfig, "kubeconfig", "_cluster/kubeconfig", "the local cluster's kubeconfig")
	pflag.StringVar(&o.cluster, "cluster", "_cluster", "the local cluster's directory (audit log, component pids)")
	pflag.StringVar(&o.out, "out", "_out/bench", "directory of guests.json and guests.md")
	// 100 TCG guests took ~10 minutes a scenario to their markers on 2 cores on 2026-11-28, and
	// the floor alone took 51 on 2026-11-29; there are four scenarios.
	pflag.DurationVar(&o.timeout, "timeout", 4*time.Hour, "give up after this long")
	// A guest that is only slow keeps printing its boot; 10 minutes without a line is a hang.
	pflag.DurationVar(&o.markerStall, "marker-stall", 10*time.Minute, "stop waiting for the guests' markers when no guest still booting has printed anything on its console for this long (or none has printed its marker for three times as long), and report the missing")
	pflag.Parse()
	if err := run(o); err != nil {
		klog.ErrorS(err, "bench-guests failed")
		os.Exit(1)
	}
}

func run(o options) error {
	memory, err := resource.ParseQuantity(o.guestMemory)
	if err != nil {
		return fmt.Errorf("--guest-memory: %w", err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst, config.UserAgent = 200, 400, userAgent
	b := &bench{
		kube:   kubernetes.NewForConfigOrDie(config),
		virt:   versioned.NewForConfigOrDie(config),
		o:      o,
		memory: memory,
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if b.node, err = b.realNode(ctx); err != nil {
		return err
	}
	r := report{Date: time.Now().UTC().Format(time.RFC3339), Interval: o.interval.String(), GuestMemory: o.guestMemory}
	if err := b.fitToNode(ctx, &r); err != nil {
		return err
	}
	o = b.o // the counts that fit
	r.VMs, r.VmctlReplicas = o.vms, o.vmctlReplicas
	if o.vms > 0 {
		klog.InfoS("floor of scenario a: launcher pods booting the guest with QEMU directly", "pods", o.vms)
		if r.Floor, err = b.measure(ctx, floorNamespace, b.floorPods); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		klog.InfoS("scenario a: VMs created one by one", "vms", o.vms)
		if r.Direct, err = b.measure(ctx, "bench-vms", b.directVMs); err != nil {
			return fmt.Errorf("VMs: %w", err)
		}
	}
	if o.vmctlReplicas > 0 {
		klog.InfoS("floor of scenario b: a Deployment of floor pods", "replicas", o.vmctlReplicas)
		if r.FloorDeployment, err = b.measure(ctx, "bench-floor-deployment", b.floorDeployment); err != nil {
			return fmt.Errorf("floor Deployment: %w", err)
		}
		klog.InfoS("scenario b: a vmctl Deployment", "replicas", o.vmctlReplicas)
		if r.Vmctl, err = b.measure(ctx, "bench-vmctl", b.vmctlDeployment); err != nil {
			return fmt.Errorf("vmctl: %w", err)
		}
	}
	return benchout.Write(o.out, "guests", r, r.markdown())
}
