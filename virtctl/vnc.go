package virtctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"

	gws "github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// viewers are the VNC clients virtctl vnc starts, in order of preference, with their
// arguments for a server at host:port.
var viewers = []struct {
	name string
	args func(host string, port int) []string
}{
	{"remote-viewer", func(host string, port int) []string { return []string{fmt.Sprintf("vnc://%s:%d", host, port)} }},
	{"vncviewer", func(host string, port int) []string { return []string{fmt.Sprintf("%s::%d", host, port)} }},
}

func vncCommand(cl *clientLoader) *cobra.Command {
	var proxyOnly bool
	var port int
	var address string
	cmd := &cobra.Command{
		Use:   "vnc VMI",
		Short: "Show the display of a running instance in a VNC viewer",
		Long: "Relays a local port to the instance's display (KubeVirt's vnc subresource) and starts\n" +
			"remote-viewer or vncviewer on it. With --proxy-only no viewer is started: virtctl prints\n" +
			`{"port": N} and relays every connection to that port until interrupted.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			open := func() (*gws.Conn, error) {
				conn, err := openStream(ctx, c, c.Namespace, "virtualmachineinstances", args[0], handlerapi.ConsoleProtocol, "vnc")
				if err != nil {
					return nil, fmt.Errorf("vnc of %s: %w", args[0], err)
				}
				return conn, nil
			}
			// The first stream is opened before listening, so a refusal (not running, no
			// display, no right) is said at once rather than to the viewer.
			first, err := open()
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port)))
			if err != nil {
				first.Close()
				return err
			}
			defer l.Close()
			go serveVNC(l, first, open, cmd.ErrOrStderr())
			local := l.Addr().(*net.TCPAddr)
			if proxyOnly {
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]int{"port": local.Port}); err != nil {
					return err
				}
				<-ctx.Done()
				return nil
			}
			return runViewer(ctx, local, cmd.ErrOrStderr())
		},
	}
	cmd.AddCommand(screenshotCommand(cl))
	cmd.Flags().BoolVar(&proxyOnly, "proxy-only", false, "only relay the port (printed as JSON); start no viewer")
	cmd.Flags().IntVar(&port, "port", 0, "the local port (0: any free port)")
	cmd.Flags().StringVar(&address, "address", "127.0.0.1", "the local address to listen on")
	return cmd
}

func screenshotCommand(cl *clientLoader) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "screenshot VMI --file FILE.png",
		Short: "Save an image of the display of a running instance (PNG)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			res := c.Subresources.Get().Namespace(c.Namespace).Resource("virtualmachineinstances").Name(args[0]).
				SubResource("vnc", "screenshot").Do(cmd.Context())
			// Error, not Raw's error: it reads the server's Status (such as "the instance has
			// no display").
			if err := res.Error(); err != nil {
				return fmt.Errorf("screenshot of %s: %w", args[0], err)
			}
			image, _ := res.Raw()
			return os.WriteFile(file, image, 0o644)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the PNG file to write")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// serveVNC relays each connection to l to a stream of its own, the first to first.
func serveVNC(l net.Listener, first *gws.Conn, open func() (*gws.Conn, error), errOut io.Writer) {
	next := first
	for {
		local, err := l.Accept()
		if err != nil {
			if next != nil {
				next.Close()
			}
			return
		}
		conn := next
		next = nil
		if conn == nil {
			if conn, err = open(); err != nil {
				fmt.Fprintln(errOut, err)
				local.Close()
				continue
			}
		}
		go func() {
			defer local.Close()
			stream := &handlerapi.WebsocketStream{Conn: conn}
			_ = handlerapi.Splice(stream, local)
			_ = stream.Close("")
		}()
	}
}

// runViewer starts the first VNC viewer found on the relayed port and waits for it.
func runViewer(ctx context.Context, local *net.TCPAddr, errOut io.Writer) error {
	host := local.IP.String()
	for _, v := range viewers {
		path, err := exec.LookPath(v.name)
		if err != nil {
			continue
		}
		viewer := exec.CommandContext(ctx, path, v.args(host, local.Port)...)
		viewer.Stdout, viewer.Stderr = errOut, errOut
		if err := viewer.Run(); err != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		return nil
	}
	return errors.New("no VNC viewer found (remote-viewer or vncviewer in $PATH): use --proxy-only and point a viewer at the port it prints")
}
