// Command virt-handler is the node agent: it runs each VirtualMachineInstance's domain on its
// node through the libvirt of the instance's virt-launcher pod (see package handler).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/handler"
	"github.com/vmctl/vmctl/handler/deviceplugin"
	"github.com/vmctl/vmctl/handler/kvm"
	"github.com/vmctl/vmctl/pkg/component"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/pkg/health"
)

func main() {
	kubeconfig := pflag.String("kubeconfig", "", "kubeconfig file (empty: in-cluster config)")
	nodeName := pflag.String("node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	kubeletRoot := pflag.String("kubelet-root", "/var/lib/kubelet", "the kubelet's root directory, as mounted in this container")
	allowEmulation := pflag.Bool("allow-emulation", false, "run guests whose launcher pod has no /dev/kvm with QEMU's software emulator (TCG)")
	devicePluginDir := pflag.String("device-plugin-dir", "/var/lib/kubelet/device-plugins", "the kubelet's device plugin directory (kubelet.sock), as mounted in this container")
	healthAddr := pflag.String("health-addr", ":8080", "address of /healthz, /readyz and /metrics")
	pflag.BoolVar(&health.Profiling, "profiling", false, "serve Go profiles under /debug/pprof/ on --health-addr (unauthenticated: for benchmarks)")
	streamAddr := pflag.String("stream-addr", fmt.Sprintf(":%d", handlerapi.Port), "address of the stream server: console, port-forward, pause, unpause, soft reboot (mutual TLS with virt-api)")
	namespace := pflag.String("namespace", os.Getenv("POD_NAMESPACE"), "namespace of the stream server's certificate Secret (default $POD_NAMESPACE)")
	podIP := pflag.String("pod-ip", os.Getenv("POD_IP"), "this pod's IP, where migrations to this node arrive (default $POD_IP; empty: the node takes none)")
	certsSecret := pflag.String("certs-secret", "virt-handler-certs", "Secret that virt-api keeps the stream server's certificates in")
	capsDir := pflag.String("launcher-capabilities", "", "directory of libvirt's QEMU capabilities cache as virt-launcher probe-capabilities wrote it on this node, copied into new launcher pods (empty: none)")
	workers := pflag.Int("workers", 64, "concurrent instance syncs: a domain's start holds one until libvirt has launched QEMU, tens of seconds on a node starting many guests, so as many as the VMs a node starts at once")
	heartbeat := pflag.Duration("heartbeat-interval", handler.DefaultHeartbeatInterval, "how often to mark this node schedulable with a heartbeat (virt-controller's --node-heartbeat-timeout must be several times longer)")
	component.ParseFlags()

	if *nodeName == "" {
		component.Exit(fmt.Errorf("no node name: set --node-name or $NODE_NAME"))
	}
	kvmUsable, reason := kvm.Usable()
	klog.InfoS("KVM probe", "usable", kvmUsable, "reason", reason, "allowEmulation", *allowEmulation)

	caps, err := handler.LoadCapabilities(*capsDir)
	if err != nil {
		component.Exit(fmt.Errorf("--launcher-capabilities: %w", err))
	}
	klog.InfoS("launcher capabilities cache", "dir", *capsDir, "files", len(caps))

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		component.Exit(err)
	}
	kube, err := component.KubeClient(config)
	if err != nil {
		component.Exit(err)
	}
	certs := handler.SecretCerts(kube, *namespace, *certsSecret)
	agent, err := handler.NewAgent(kube, versioned.NewForConfigOrDie(config), handler.Options{
		NodeName:       *nodeName,
		KubeletRoot:    *kubeletRoot,
		AllowEmulation: *allowEmulation,
		Capabilities:   caps,
		PodIP:          *podIP,
		MigrationCerts: certs,
	}, *workers)
	if err != nil {
		component.Exit(err)
	}
	g, ctx := errgroup.WithContext(component.SignalContext())
	g.Go(func() error {
		return health.Serve(ctx, *healthAddr, health.Check(agent.Ready), health.Check(agent.Live), agent.Metrics())
	})
	g.Go(func() error { return agent.Run(ctx) })
	beat := &handler.Heartbeat{Nodes: kube.CoreV1().Nodes(), NodeName: *nodeName, Interval: *heartbeat,
		Ready: agent.Ready, Clock: clock.RealClock{}}
	g.Go(func() error { return beat.Run(ctx) })
	g.Go(func() error {
		return agent.Streams(certs).Serve(ctx, *streamAddr)
	})
	g.Go(func() error {
		return deviceplugin.Run(ctx, *devicePluginDir, handler.NodeDevices(kvmUsable, handler.HostHas))
	})
	component.Exit(g.Wait())
}
