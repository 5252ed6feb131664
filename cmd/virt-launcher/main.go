// Command virt-launcher runs inside each VirtualMachineInstance's pod: by default it is the
// compute container's main process (package launcher); its copy-disk and copy-file
// subcommands are the init containers that copy disks and kernels out of their images.
// docs/node.md describes the pod. The binary is static, as the init containers run it from
// a shared emptyDir inside images that bring nothing else.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher"
	"github.com/vmctl/vmctl/launcher/containerdisk"
	"github.com/vmctl/vmctl/launcher/diskcopy"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/launcher/network"
)

// pkg/component is not used here: its health server pulls Prometheus and apimachinery into
// a binary that every launcher pod copies into its tools emptyDir.

func main() {
	root := rootCommand()
	klog.InitFlags(nil)
	root.PersistentFlags().AddGoFlagSet(flag.CommandLine)
	if err := root.Execute(); err != nil {
		exit(1, err)
	}
}

// terminationLog is the kubelet's default terminationMessagePath.
const terminationLog = "/dev/termination-log"

// exit flushes the logs and ends the process with code; err, when set, is logged first.
func exit(code int, err error) {
	if err != nil {
		klog.ErrorS(err, "exiting")
		// The pod's termination message, which virt-controller copies into the VMI's
		// conditions; best effort, as only the compute container has the file.
		_ = os.WriteFile(terminationLog, []byte(err.Error()), 0o644)
	}
	klog.Flush()
	os.Exit(code)
}

// signalContext ends on the first SIGTERM (the kubelet deleting the pod; tini forwards it)
// or SIGINT. Later signals stay caught, so a second SIGTERM cannot cut the shutdown short.
func signalContext() context.Context {
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	return ctx
}

func rootCommand() *cobra.Command {
	cfg := launcher.Config{}
	var grace int64
	var agentKeys, ntpServers, privateOptions []string
	var bootFile, tftpServer string
	root := &cobra.Command{
		Use:           "virt-launcher --name NAME --namespace NAMESPACE [flags]",
		Short:         "Runs one VirtualMachineInstance's libvirtd and follows its domain",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if grace < 0 {
				return fmt.Errorf("--grace-period %d: must be 0 or more", grace)
			}
			cfg.GracePeriod = time.Duration(grace) * time.Second
			for _, s := range agentKeys {
				k, err := launcher.ParseAgentKeys(s)
				if err != nil {
					return err
				}
				cfg.AgentSSHKeys = append(cfg.AgentSSHKeys, k)
			}
			var err error
			if cfg.DHCPOptions, err = network.ParseOptions(bootFile, tftpServer, ntpServers, privateOptions); err != nil {
				return err
			}
			code, err := launcher.Run(signalContext(), cfg)
			if err != nil {
				code = 1
			}
			exit(code, err)
			return nil
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	f := root.Flags()
	f.StringVar(&cfg.Name, "name", "", "the VirtualMachineInstance's name")
	f.StringVar(&cfg.Namespace, "namespace", "", "the VirtualMachineInstance's namespace")
	f.StringVar(&cfg.UID, "uid", "", "the VirtualMachineInstance's UID (for logs)")
	f.Int64Var(&grace, "grace-period", 30, "seconds the guest may take to shut down after SIGTERM before it is destroyed; 0 destroys at once")
	f.StringVar(&cfg.Hostname, "hostname", "", "hostname DHCP offers the guest (default: --name)")
	f.StringVar(&cfg.Network, "network", launcher.NetworkMasquerade, "pod network binding: masquerade (DHCP for the guest on k6t-br0, which virt-handler makes with tap0 and the NAT), bridge (the pod's own address by DHCP, eth0 on k6t-br0) or none")
	f.StringVar(&cfg.PrivateDir, "private-dir", layout.PrivateDir, "the pod's private directory (libvirt socket, console log)")
	f.StringVar(&cfg.Libvirtd, "libvirtd", "/usr/sbin/libvirtd", "libvirtd binary")
	f.StringVar(&cfg.LibvirtdConf, "libvirtd-conf", "/etc/libvirt/libvirtd.conf", "libvirtd's configuration file")
	f.StringVar(&cfg.QEMUConf, "qemu-conf", "/etc/libvirt/qemu.conf", "libvirt's QEMU driver configuration, copied into the session daemon's XDG_CONFIG_HOME")
	f.DurationVar(&cfg.NetworkWait, "network-timeout", 4*time.Minute, "how long virt-handler may take to plumb the pod network (masquerade)")
	f.DurationVar(&cfg.SocketTimeout, "socket-timeout", time.Minute, "how long libvirtd may take to open its socket")
	f.StringVar(&bootFile, "dhcp-boot-file-name", "", "DHCP option 67 for the guest")
	f.StringVar(&tftpServer, "dhcp-tftp-server-name", "", "DHCP option 66 for the guest")
	f.StringArrayVar(&ntpServers, "dhcp-ntp-server", nil, "an IPv4 address for DHCP option 42 (repeatable)")
	f.StringArrayVar(&privateOptions, "dhcp-private-option", nil, "CODE=VALUE: private DHCP option CODE (224 to 254) for the guest (repeatable)")
	f.StringArrayVar(&cfg.AgentPasswords, "agent-passwords", nil, "DIR: set the passwords of the Secret mounted at DIR (each key a user name, its value the password) through the guest agent (repeatable)")
	f.StringArrayVar(&agentKeys, "agent-ssh-keys", nil, "DIR:USER[,USER...]: set the SSH keys of the Secret mounted at DIR as each user's authorized keys through the guest agent (repeatable)")
	f.BoolVar(&cfg.DownwardMetricsDisk, "downward-metrics-disk", false, "make the downwardMetrics volume's disk and keep it current")
	f.BoolVar(&cfg.DownwardMetricsPort, "downward-metrics-port", false, "answer the guest on the downwardMetrics device's virtio-serial port")
	f.StringVar(&cfg.NodeName, "node-name", "", "the node's name, which the downward metrics report")

	root.AddCommand(&cobra.Command{
		Use:   "hold-disk SRC DESTDIR",
		Short: "Serve a containerDisk in place: write DESTDIR/disk.qcow2 over it and keep its file system reachable until SIGTERM (SRC: the image file, or a directory whose first regular file is taken)",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return containerdisk.Hold(signalContext(), args[0], args[1])
		},
	}, &cobra.Command{
		Use:   "guest-console-log",
		Short: "Copy the guest's serial console to stdout until SIGTERM (the guest-console-log container)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			launcher.FollowConsole(signalContext(), cfg.PrivateDir, os.Stdout)
			return nil
		},
	}, &cobra.Command{
		Use:   "probe-capabilities OUTDIR",
		Short: "Have libvirtd probe QEMU's capabilities as a launcher pod's would and copy its cache into OUTDIR (virt-handler's init container; the handler seeds launcher pods with it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return launcher.ProbeCapabilities(signalContext(), cfg, args[0])
		},
	}, guestProbeCommand(cfg.PrivateDir), &cobra.Command{
		Use:   "copy-file SRC DEST [SRC DEST]...",
		Short: "Copy files (a kernelBoot kernel and initrd), creating each DEST's directory",
		// Pairs, so one init container copies both kernelBoot files: its image may have
		// no shell to run the command twice.
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || len(args)%2 != 0 {
				return fmt.Errorf("want SRC DEST pairs, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			for i := 0; i < len(args); i += 2 {
				if err := diskcopy.File(args[i], args[i+1]); err != nil {
					return err
				}
				klog.InfoS("copied file", "from", args[i], "to", args[i+1])
			}
			return nil
		},
	})
	return root
}

// guestProbeCommand is the compute container's exec probe for KubeVirt's guestAgentPing and
// exec probes (controller/vmi renders it).
func guestProbeCommand(privateDir string) *cobra.Command {
	var domain string
	var timeout int
	cmd := &cobra.Command{
		Use:   "guest-probe --domain NAME [--timeout SECONDS] [-- COMMAND [ARG]...]",
		Short: "Probe the guest through its agent: without COMMAND, ping the agent; with it, run COMMAND in the guest, which must exit 0",
		RunE: func(cmd *cobra.Command, args []string) error {
			if domain == "" || timeout < 1 {
				return fmt.Errorf("--domain is required and --timeout must be at least 1")
			}
			return launcher.GuestProbe(signalContext(), privateDir, domain, args, time.Duration(timeout)*time.Second)
		},
	}
	cmd.Flags().StringVar(&domain, "domain", "", "the domain (namespace_name)")
	cmd.Flags().IntVar(&timeout, "timeout", 1, "seconds the probe may take")
	return cmd
}
