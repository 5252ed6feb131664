package virtctl

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// localSSHArgs is the system tool's command line up to the destination: tool is ssh or scp,
// each connecting through `virtctl port-forward --stdio` with this virtctl's cluster flags.
func localSSHArgs(cl *clientLoader, o *sshOptions, tool string, t target, knownHostsSet bool) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	proxy := []string{self}
	if cl != nil {
		if p := cl.rules.ExplicitPath; p != "" {
			proxy = append(proxy, "--kubeconfig", p)
		}
		if ctx := cl.overrides.CurrentContext; ctx != "" {
			proxy = append(proxy, "--context", ctx)
		}
	}
	proxy = append(proxy, "port-forward", "--stdio", hostAlias(t), strconv.Itoa(o.port))
	quoted := make([]string, len(proxy))
	for i, a := range proxy {
		quoted[i] = shellQuote(a)
	}
	argv := []string{tool, "-o", "ProxyCommand=" + strings.Join(quoted, " ")}
	if knownHostsSet && o.knownHosts != "" {
		argv = append(argv, "-o", "UserKnownHostsFile="+o.knownHosts)
	}
	for _, f := range o.identityFiles {
		argv = append(argv, "-i", f)
	}
	return argv, nil
}

// shellQuote quotes s for the shell ssh runs ProxyCommand with.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runLocal runs the system tool in the foreground; its exit status becomes ours.
func runLocal(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("--local-ssh: %w", err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	return err
}

// wsConn is a port-forward stream as the net.Conn the ssh client runs on.
type wsConn struct {
	*handlerapi.WebsocketStream
}

func (c *wsConn) Close() error         { return c.WebsocketStream.Close("") }
func (c *wsConn) LocalAddr() net.Addr  { return c.Conn.LocalAddr() }
func (c *wsConn) RemoteAddr() net.Addr { return c.Conn.RemoteAddr() }
func (c *wsConn) SetDeadline(t time.Time) error {
	_ = c.Conn.SetReadDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}
func (c *wsConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(t) }
func (c *wsConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(t) }
