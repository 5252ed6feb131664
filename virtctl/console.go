package virtctl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	gws "github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// consoleProtocol is the websocket subprotocol virt-api speaks on the console: raw bytes.
const consoleProtocol = "plain.kubevirt.io"

// escapeByte ends the session: Ctrl+], as in telnet and virsh console.
const escapeByte = 0x1d

func consoleCommand(cl *clientLoader) *cobra.Command {
	return &cobra.Command{
		Use:   "console VMI",
		Short: "Connect to the serial console of a running instance (Ctrl+] to leave)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cl.clients()
			if err != nil {
				return err
			}
			conn, err := openStream(cmd.Context(), c, c.Namespace, "virtualmachineinstances", args[0], consoleProtocol, "console")
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
