// Command bench-vmctl measures what vmctl adds, on the running local cluster with real guests:
//   - to starting a VM (make bench-vmctl): the time from a vmctl pod Running to its clone's
//     instance Running, next to the time from creating the same VM directly to its instance
//     Running. Runs alternate between the two, one guest at a time; medians are reported.
//   - to reaching it (make bench, --forward-requests): HTTP latency and throughput through a
//     vmctl pod's --forward, next to the same requests sent to the guest directly.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
)

type options struct {
	runs       int
	kubeconfig string
	image      string
	timeout    time.Duration
	requests   int
	mib        int
	out        string
}

func main() {
	var o options
	pflag.IntVar(&o.runs, "runs", 5, "runs of each kind")
	pflag.StringVar(&o.kubeconfig, "kubeconfig", "_cluster/kubeconfig", "the local cluster's kubeconfig")
	pflag.StringVar(&o.image, "image", "vmctl/vmctl:devel", "vmctl's image")
	pflag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	pflag.IntVar(&o.requests, "forward-requests", 0, "measure --forward with this many requests each way (0: not at all)")
	pflag.IntVar(&o.mib, "forward-mib", 16, "MiB of each of the three throughput requests each way")
	pflag.StringVar(&o.out, "out", "", "directory for forward.{md,json} (the --forward figures)")
	pflag.Parse()
	if err := run(o); err != nil {
		klog.ErrorS(err, "bench-vmctl failed")
		os.Exit(1)
	}
}

func run(o options) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	b := &bench{kube: kubernetes.NewForConfigOrDie(config), virt: versioned.NewForConfigOrDie(config), image: o.image}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := b.setUp(ctx); err != nil {
		return err
	}
	defer b.tearDown()

	if o.requests > 0 {
		r, err := b.forwardCost(ctx, o.requests, o.mib)
		if err != nil {
			return fmt.Errorf("forward: %w", err)
		}
		if o.out == "" {
			fmt.Print(r.table())
		} else if err := benchout.Write(o.out, "forward", r, r.table()); err != nil {
			return err
		}
	}
	if o.runs == 0 {
		return nil
	}
	var direct, cloned, whole []time.Duration
	for i := range o.runs {
		d, err := b.direct(ctx, i)
		if err != nil {
			return fmt.Errorf("direct run %d: %w", i, err)
		}
		c, w, err := b.cloned(ctx, i)
		if err != nil {
			return fmt.Errorf("vmctl run %d: %w", i, err)
		}
		klog.InfoS("run", "n", i+1, "direct", d.Round(time.Millisecond), "vmctl", c.Round(time.Millisecond), "vmctlFromPodCreation", w.Round(time.Millisecond))
		direct, cloned, whole = append(direct, d), append(cloned, c), append(whole, w)
	}
	md, mc := median(direct), median(cloned)
	fmt.Printf("\n| start (median of %d, one guest at a time) | time to instance Running |\n| --- | --- |\n", o.runs)
	fmt.Printf("| VM created directly (runStrategy Always) -> VMI Running | %.2f s |\n", md.Seconds())
	fmt.Printf("| vmctl pod Running -> clone's VMI Running | %.2f s |\n", mc.Seconds())
	fmt.Printf("| difference (goal: within 1 s) | %+.2f s |\n", (mc - md).Seconds())
	fmt.Printf("| for scale: vmctl pod created -> clone's VMI Running (adds scheduling and the container's start) | %.2f s |\n", median(whole).Seconds())
	fmt.Printf("\ndirect: %v\nvmctl:  %v\nvmctl from pod creation: %v\n", rounded(direct), rounded(cloned), rounded(whole))
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rounded(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, v := range d {
		out[i] = v.Round(10 * time.Millisecond)
	}
	return out
}
