package virtctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"

	gws "github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// target is what port-forward, ssh and scp reach: a VM (its running instance) or an instance.
type target struct {
	resource  string // virtualmachines or virtualmachineinstances
	name      string
	namespace string // "": the command's namespace
}

// kindPrefix is how the target is written back: vm or vmi.
func (t target) kindPrefix() string {
	if t.resource == "virtualmachines" {
		return "vm"
	}
	return "vmi"
}

// parseTarget reads KubeVirt's forms TYPE/NAME, TYPE/NAME/NAMESPACE and the older
// TYPE/NAME.NAMESPACE (a dot in the name without a /NAMESPACE, as KubeVirt's virtctl still
// reads it). TYPE is vm, vmi or their long and plural forms.
func parseTarget(arg string) (target, error) {
	parts := strings.Split(arg, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return target{}, fmt.Errorf("target %q: want TYPE/NAME or TYPE/NAME/NAMESPACE, TYPE vm or vmi", arg)
	}
	var t target
	switch strings.ToLower(parts[0]) {
	case "vm", "vms", "virtualmachine", "virtualmachines":
		t.resource = "virtualmachines"
	case "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		t.resource = "virtualmachineinstances"
	default:
		return target{}, fmt.Errorf("target %q: unsupported type %q, want vm or vmi", arg, parts[0])
	}
	t.name = parts[1]
	if len(parts) == 3 {
		if t.namespace = parts[2]; t.namespace == "" {
			return target{}, fmt.Errorf("target %q: empty namespace", arg)
		}
	} else if name, ns, ok := strings.Cut(t.name, "."); ok {
		t.name, t.namespace = name, ns
	}
	if t.name == "" || (len(parts) == 2 && strings.HasSuffix(arg, ".")) {
		return target{}, fmt.Errorf("target %q: empty name or namespace", arg)
	}
	return t, nil
}

// forwardedPort is one [PROTOCOL/][LOCAL:]REMOTE argument.
type forwardedPort struct {
	local, remote int // local 0: a free port
	protocol      string
}

// parsePort reads [tcp/|udp/]LOCAL[:REMOTE] (KubeVirt's form; REMOTE defaults to LOCAL) and
// kubectl's :REMOTE (a free local port).
func parsePort(arg string) (forwardedPort, error) {
	p := forwardedPort{protocol: handlerapi.TCP}
	spec := arg
	if proto, rest, ok := strings.Cut(arg, "/"); ok {
		p.protocol, spec = strings.ToLower(proto), rest
		if p.protocol != handlerapi.TCP && p.protocol != handlerapi.UDP {
			return p, fmt.Errorf("port %q: protocol %q, want tcp or udp", arg, proto)
		}
	}
	local, remote, hasRemote := strings.Cut(spec, ":")
	if !hasRemote {
		remote = local
	}
	var err error
	if p.remote, err = strconv.Atoi(remote); err != nil || p.remote < 1 || p.remote > 65535 {
		return p, fmt.Errorf("port %q: remote port %q, want 1-65535", arg, remote)
	}
	if local == "" && hasRemote {
		return p, nil // :REMOTE
	}
	if p.local, err = strconv.Atoi(local); err != nil || p.local < 0 || p.local > 65535 {
		return p, fmt.Errorf("port %q: local port %q, want 0-65535", arg, local)
	}
	return p, nil
}

type portForwardOptions struct {
	address string
	stdio   bool
}

func portForwardCommand(cl *clientLoader) *cobra.Command {
	o := portForwardOptions{}
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME[/NAMESPACE] [tcp/|udp/][LOCAL:]REMOTE...",
		Short: "Forward local ports to a VM's or an instance's guest",
		Long: "Listens on local ports and relays each connection to the guest's port through the\n" +
			"API server (the portforward subresource), as kubectl port-forward does for pods.\n" +
			"TYPE is vm or vmi; TYPE/NAME.NAMESPACE is read as KubeVirt's virtctl reads it.\n" +
			"With --stdio, one connection is relayed over stdin and stdout, for ssh's ProxyCommand.",
		Example: "  virtctl port-forward vmi/web 8080:80\n" +
			"  virtctl port-forward vm/db/prod 5432 udp/5353:53\n" +
			"  ssh -o 'ProxyCommand=virtctl port-forward --stdio vmi/web.default 22' user@vmi/web.default",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseTarget(args[0])
			if err != nil {
				return err
			}
			var ports []forwardedPort
			for _, a := range args[1:] {
				p, err := parsePort(a)
				if err != nil {
					return err
				}
				ports = append(ports, p)
			}
			if o.stdio && len(ports) != 1 {
				return errors.New("--stdio forwards exactly one port")
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			if t.namespace == "" {
				t.namespace = c.Namespace
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if o.stdio {
				return forwardStdio(ctx, c, t, ports[0], cmd.InOrStdin(), cmd.OutOrStdout())
			}
			return forwardPorts(ctx, c, t, o.address, ports, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1", "the local address to listen on")
	cmd.Flags().BoolVar(&o.stdio, "stdio", false, "relay one connection over stdin and stdout instead of listening")
	return cmd
}

// openPortForward opens the websocket of one connection to port of t's guest.
func openPortForward(ctx context.Context, c *clients, t target, port int, protocol string) (*gws.Conn, error) {
	conn, err := openStream(ctx, c, t.namespace, t.resource, t.name, handlerapi.PortForwardProtocol, "portforward", strconv.Itoa(port), protocol)
	if err != nil {
		return nil, fmt.Errorf("port-forward to %s/%s port %d/%s: %w", t.kindPrefix(), t.name, port, protocol, err)
	}
	return conn, nil
}

// forwardStdio relays one connection over in and out until either side ends.
func forwardStdio(ctx context.Context, c *clients, t target, p forwardedPort, in io.Reader, out io.Writer) error {
	conn, err := openPortForward(ctx, c, t, p.remote, p.protocol)
	if err != nil {
		return err
	}
	stream := &handlerapi.WebsocketStream{Conn: conn}
	defer stream.Close("")
	done := make(chan error, 2)
	go func() { _, err := io.Copy(out, stream); done <- err }()
	go func() {
		// The end of stdin is not the end of the connection: the guest may still answer
		// (a request piped in); the guest closing is.
		if _, err := io.Copy(stream, in); err != nil {
			done <- err
		}
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	return err
}

// forwardPorts listens on every port and relays until ctx ends.
func forwardPorts(ctx context.Context, c *clients, t target, address string, ports []forwardedPort, out, errOut io.Writer) error {
	var wg sync.WaitGroup
	var closers []io.Closer
	defer func() {
		for _, cl := range closers {
			_ = cl.Close()
		}
		wg.Wait()
	}()
	for _, p := range ports {
		addr := net.JoinHostPort(address, strconv.Itoa(p.local))
		f := &forwarder{ctx: ctx, c: c, t: t, remote: p.remote, errOut: errOut}
		var local net.Addr
		if p.protocol == handlerapi.UDP {
			pc, err := net.ListenPacket("udp", addr)
			if err != nil {
				return err
			}
			closers, local = append(closers, pc), pc.LocalAddr()
			wg.Go(func() { f.serveUDP(pc) })
		} else {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			closers, local = append(closers, l), l.Addr()
			wg.Go(func() { f.serveTCP(l) })
		}
		fmt.Fprintf(out, "Forwarding from %s/%s -> %d\n", local, p.protocol, p.remote)
	}
	<-ctx.Done()
	return nil
}
