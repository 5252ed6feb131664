// Package component holds the start-up every binary shares: klog flags on the pflag command
// line, and a context that ends on SIGTERM or SIGINT so components shut down cleanly.
package component

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/health"
)

// ParseFlags adds klog's flags to the pflag command line and parses it.
func ParseFlags() {
	klog.InitFlags(nil)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
}

// SignalContext is cancelled by the first SIGTERM or SIGINT.
func SignalContext() context.Context {
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	return ctx
}

// Exit ends the process: status 0 for a nil error, else 1 after logging it.
func Exit(err error) {
	klog.Flush()
	if err != nil {
		klog.ErrorS(err, "exiting")
		klog.Flush()
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeHealthOnly is the whole main of a component whose work has not landed yet: it serves
// /healthz and /readyz (so it deploys and becomes Ready) and does nothing else.
func ServeHealthOnly(name string, issue int) {
	healthAddr := pflag.String("health-addr", ":8080", "address of the /healthz and /readyz endpoints")
	ParseFlags()
	klog.InfoS("starting; health endpoints only until its issue lands", "component", name, "issue", issue)
	Exit(health.Serve(SignalContext(), *healthAddr, health.Always, health.Always))
}
