package virtctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
	"golang.org/x/term"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// sshOptions are what ssh and scp share: who logs in with which keys, to which port, and how
// the guest's host key is checked.
type sshOptions struct {
	identityFiles []string
	user          string
	port          int
	knownHosts    string
	localSSH      bool
}

func (o *sshOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.identityFiles, "identity-file", "i", nil, "private key to log in with (default: ssh-agent and ~/.ssh/id_*)")
	fs.StringVarP(&o.user, "username", "l", "", "user to log in as (default: USER@ in the target, else the local user)")
	fs.IntVarP(&o.port, "port", "p", 22, "the guest's ssh port")
	fs.StringVar(&o.knownHosts, "known-hosts", defaultKnownHosts(), "known hosts file: a guest's first key is added, a changed key refused")
	fs.BoolVar(&o.localSSH, "local-ssh", false, "run the system's ssh (scp) with virtctl port-forward --stdio as its ProxyCommand")
}

func defaultKnownHosts() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".ssh", "kubevirt_known_hosts")
}

// parseLogin reads [USER@]TYPE/NAME[/NAMESPACE] (or TYPE/NAME.NAMESPACE).
func parseLogin(arg string) (string, target, error) {
	user, rest, ok := strings.Cut(arg, "@")
	if !ok {
		user, rest = "", arg
	} else if user == "" {
		return "", target{}, fmt.Errorf("%q: empty user before @", arg)
	}
	t, err := parseTarget(rest)
	return user, t, err
}

// loginUser is the user of the target, else --username, else the local user (as ssh does).
func (o *sshOptions) loginUser(fromTarget string) string {
	switch {
	case fromTarget != "":
		return fromTarget
	case o.user != "":
		return o.user
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// hostAlias names the guest in known hosts and for the system ssh: TYPE/NAME.NAMESPACE, the
// name KubeVirt's virtctl gives it, so both tools share the file.
func hostAlias(t target) string {
	return t.kindPrefix() + "/" + t.name + "." + t.namespace
}

func sshCommand(cl *clientLoader) *cobra.Command {
	o := &sshOptions{}
	var command string
	cmd := &cobra.Command{
		Use:   "ssh [USER@]TYPE/NAME[/NAMESPACE]",
		Short: "Open an ssh session to a VM's or an instance's guest",
		Long: "Logs in to the guest's ssh server through the portforward subresource: no Service,\n" +
			"no route to the pod network needed. Without --command the session is interactive\n" +
			"(with a terminal when stdin is one).",
		Example: "  virtctl ssh fedora@vm/web\n  virtctl ssh -i ~/.ssh/id_ed25519 -c 'uptime' root@vmi/web/prod\n" +
			"  virtctl ssh --local-ssh fedora@vm/web",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			login, t, err := parseLogin(args[0])
			if err != nil {
				return err
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			if t.namespace == "" {
				t.namespace = c.Namespace
			}
			user := o.loginUser(login)
			if o.localSSH {
				argv, err := localSSHArgs(cl, o, "ssh", t, cmd.Flags().Changed("known-hosts"))
				if err != nil {
					return err
				}
				argv = append(argv, user+"@"+hostAlias(t))
				if command != "" {
					argv = append(argv, command)
				}
				return runLocal(argv)
			}
			client, err := o.connect(cmd.Context(), c, t, user, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer client.Close()
			err = runSession(client, command, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			var exit *ssh.ExitError
			if errors.As(err, &exit) {
				client.Close()
				os.Exit(exit.ExitStatus()) // the remote command's status is ours, as with ssh
			}
			return err
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&command, "command", "c", "", "run this command instead of an interactive shell")
	return cmd
}

// connect opens an ssh client to t's guest as user over a port-forward stream.
func (o *sshOptions) connect(ctx context.Context, c *clients, t target, user string, warn io.Writer) (*ssh.Client, error) {
	auth, err := o.authMethods()
	if err != nil {
		return nil, err
	}
	ws, err := openPortForward(ctx, c, t, o.port, handlerapi.TCP)
	if err != nil {
		return nil, err
	}
	kh := knownHostsFile{path: o.knownHosts, warn: warn}
	return newSSHClient(&wsConn{WebsocketStream: &handlerapi.WebsocketStream{Conn: ws}}, hostAlias(t), o.port, user, auth, kh.callback())
}

// newSSHClient runs the ssh handshake over conn; alias and port name the guest's host key.
func newSSHClient(conn net.Conn, alias string, port int, user string, auth []ssh.AuthMethod, hostKey ssh.HostKeyCallback) (*ssh.Client, error) {
	cfg := &ssh.ClientConfig{User: user, Auth: auth, HostKeyCallback: hostKey, Timeout: 30 * time.Second}
	addr := net.JoinHostPort(alias, strconv.Itoa(port))
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ssh to %s: %w", alias, err)
	}
	return ssh.NewClient(sc, chans, reqs), nil
}

// runSession runs command, or a shell when it is empty: with a terminal of stdin's size when
// stdin is a terminal, raw until the session ends.
func runSession(client *ssh.Client, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	session, err := client.NewSession()
	if err != nil {
		return err
	}
	defer session.Close()
	session.Stdin, session.Stdout, session.Stderr = stdin, stdout, stderr
	if command != "" {
		return session.Run(command)
	}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		w, h, err := term.GetSize(fd)
		if err != nil {
			w, h = 80, 24
		}
		termType := os.Getenv("TERM")
		if termType == "" {
			termType = "xterm-256color"
		}
		if err := session.RequestPty(termType, h, w, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
			return err
		}
		state, err := term.MakeRaw(fd)
		if err != nil {
			return err
		}
		defer func() { _ = term.Restore(fd, state) }()
		resized := make(chan os.Signal, 1)
		signal.Notify(resized, syscall.SIGWINCH)
		defer signal.Stop(resized)
		go func() {
			for range resized {
				if w, h, err := term.GetSize(fd); err == nil {
					_ = session.WindowChange(h, w)
				}
			}
		}()
	}
	if err := session.Shell(); err != nil {
		return err
	}
	return session.Wait()
}
