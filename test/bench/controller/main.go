// Command bench-controller measures virt-controller at scale on the local cluster with kwok
// nodes (make bench-controller): how long 1000 VirtualMachines take until every instance is
// Scheduled, next to the floor of a 1000-replica Deployment's pods reaching Running on the same
// nodes; how many API writes the controller makes per VM; and the controller's memory.
//
// kwok plays the kubelet for the launcher pods, so no guest runs: the VMIs stop at Scheduled,
// which is where the controller's work ends and the node's begins.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
)

type options struct {
	count      int
	kubeconfig string
	out        string
	timeout    time.Duration
}

func main() {
	var o options
	pflag.IntVar(&o.count, "count", 1000, "VMs, and Deployment replicas, to create")
	pflag.StringVar(&o.kubeconfig, "kubeconfig", "_cluster/kubeconfig", "the local cluster's kubeconfig")
	pflag.StringVar(&o.out, "out", "_out/bench", "directory of controller.json and controller.md")
	pflag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up after this long")
	pflag.Parse()
	if err := run(o); err != nil {
		klog.ErrorS(err, "bench-controller failed")
		os.Exit(1)
	}
}

func run(o options) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	// The bench's own client must never be the bottleneck.
	config.QPS, config.Burst = 1000, 2000
	c := clients{kube: kubernetes.NewForConfigOrDie(config), virt: versioned.NewForConfigOrDie(config)}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()

	r := result{Count: o.count, Date: time.Now().UTC().Format(time.RFC3339)}
	if r.Nodes, err = c.kwokNodes(ctx); err != nil {
		return err
	}
	klog.InfoS("floor: a Deployment's pods on the kwok nodes", "replicas", o.count, "nodes", r.Nodes)
	beforeFloor, err := c.scrapeWrites(ctx)
	if err != nil {
		return err
	}
	if r.DeploymentSeconds, r.FloorCPU, err = c.deploymentFloor(ctx, o.count); err != nil {
		return fmt.Errorf("deployment floor: %w", err)
	}
	if r.FloorWrites, err = c.writesSince(ctx, beforeFloor); err != nil {
		return err
	}
	// Clear the nodes for the VMs.
	if err := benchout.DeleteNamespace(ctx, c.kube, floorNamespace); err != nil {
		return err
	}
	before, err := c.scrapeWrites(ctx)
	if err != nil {
		return err
	}
	hooks, err := c.scrapeWebhooks(ctx)
	if err != nil {
		return err
	}
	klog.InfoS("VMs until every instance is Scheduled", "vms", o.count)
	if r.Stages, r.VMCPU, err = c.vmsScheduled(ctx, o.count); err != nil {
		return fmt.Errorf("VMs: %w", err)
	}
	r.VMSeconds = r.Stages.Scheduled
	if r.ScheduledWrites, err = c.writesSince(ctx, before); err != nil {
		return err
	}
	if r.Webhooks, err = c.scrapeWebhooks(ctx); err != nil {
		return err
	}
	r.Webhooks = r.Webhooks.since(hooks)
	if r.Writes, err = c.settledWrites(ctx, before); err != nil {
		return err
	}
	if r.ControllerRSS, r.ControllerPeakRSS, err = controllerMemory(); err != nil {
		return err
	}
	r.summarise()
	if err := c.cleanup(ctx); err != nil {
		klog.ErrorS(err, "cleanup")
	}
	return benchout.Write(o.out, "controller", r, r.markdown())
}
