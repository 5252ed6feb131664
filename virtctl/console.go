package virtctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/wait"
)

// consoleProtocol is the websocket subprotocol virt-api speaks on the console: raw bytes.
const consoleProtocol = "plain.kubevirt.io"

// escapeByte ends the session: Ctrl+], as in telnet and virsh console.
const escapeByte = 0x1d

func consoleCommand(cl *clientLoader) *cobra.Command {
	var timeout int
	cmd := &cobra.Command{
		Use:   "console VMI",
		Short: "Connect to the serial console of a running instance (Ctrl+] to leave)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			conn, err := openConsole(cmd.Context(), c, args[0], time.Duration(timeout)*time.Minute)
			if err != nil {
				return fmt.Errorf("console of %s: %w", args[0], err)
			}
			defer conn.Close()
			in := cmd.InOrStdin()
			if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				state, err := term.MakeRaw(int(f.Fd()))
				if err == nil {
					defer func() { _ = term.Restore(int(f.Fd()), state) }()
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "Connected to %s; Ctrl+] to leave.\r\n", args[0])
			}
			return relay(conn, in, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&timeout, "timeout", 5, "The number of minutes to wait for the virtual machine instance to be ready.")
	return cmd
}

// openConsole opens the console of the named instance. While virt-api answers that the
// instance does not run yet (409: a VM just started), it asks again every second until timeout
// has passed, as KubeVirt's virtctl does: `virtctl start vm && virtctl console vm` works.
func openConsole(ctx context.Context, c *clients, name string, timeout time.Duration) (*gws.Conn, error) {
	var conn *gws.Conn
	var openErr error
	// Each try on ctx, not the poll's: that one ends at timeout, which may be 0 (try once).
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		conn, openErr = openStream(ctx, c, c.Namespace, "virtualmachineinstances", name, consoleProtocol, "console")
		var upgrade *httpstream.UpgradeFailureError
		return !errors.As(openErr, &upgrade) || !apierrors.IsConflict(upgrade.Cause), nil
	})
	if err != nil && openErr == nil { // cancelled before any try
		return nil, err
	}
	return conn, openErr // once waited out: the last 409
}

// relay copies the console to out and in to the console until either side ends or the user
// types the escape byte. The server's close reason, if not a plain close, is the error.
func relay(conn *gws.Conn, in io.Reader, out io.Writer) error {
	done := make(chan error, 2)
	go func() {
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				var ce *gws.CloseError
				if errors.As(err, &ce) && (ce.Code == gws.CloseNormalClosure && (ce.Text == "" || ce.Text == "console closed")) {
					err = nil
				} else if errors.As(err, &ce) {
					err = errors.New(ce.Text)
				}
				done <- err
				return
			}
			if _, err := out.Write(data); err != nil {
				done <- err
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				chunk := buf[:n]
				i := bytes.IndexByte(chunk, escapeByte)
				if i >= 0 {
					chunk = chunk[:i]
				}
				if len(chunk) > 0 {
					if werr := conn.WriteMessage(gws.BinaryMessage, chunk); werr != nil {
						done <- werr
						return
					}
				}
				if i >= 0 {
					done <- nil
					return
				}
			}
			if err != nil {
				// stdin ended (a pipe): keep showing the console until the server ends it.
				return
			}
		}
	}()
	err := <-done
	_ = conn.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, ""))
	return err
}
