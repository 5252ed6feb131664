package virtctl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
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

// authMethods are the keys of --identity-file, or ssh-agent's and the default keys; then a
// password asked on the terminal, when there is one.
func (o *sshOptions) authMethods() ([]ssh.AuthMethod, error) {
	var signers []ssh.Signer
	files := o.identityFiles
	if len(files) == 0 {
		if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
			if conn, err := net.Dial("unix", sock); err == nil {
				if agentSigners, err := agent.NewClient(conn).Signers(); err == nil {
					signers = append(signers, agentSigners...)
				}
			}
		}
		if home, err := os.UserHomeDir(); err == nil {
			for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				if s, err := loadKey(filepath.Join(home, ".ssh", name)); err == nil {
					signers = append(signers, s)
				}
			}
		}
	}
	for _, f := range files {
		s, err := loadKey(f)
		if err != nil {
			return nil, fmt.Errorf("identity file %s: %w", f, err)
		}
		signers = append(signers, s)
	}
	var methods []ssh.AuthMethod
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		methods = append(methods, ssh.PasswordCallback(func() (string, error) { return readSecret("Password: ") }))
	}
	return methods, nil
}

// loadKey reads a private key, asking for its passphrase on the terminal when it has one.
func loadKey(path string) (ssh.Signer, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) && term.IsTerminal(int(os.Stdin.Fd())) {
		pass, perr := readSecret("Passphrase for " + path + ": ")
		if perr != nil {
			return nil, perr
		}
		return ssh.ParsePrivateKeyWithPassphrase(pem, []byte(pass))
	}
	return s, err
}

func readSecret(prompt string) (string, error) {
	fmt.Fprint(os.Stderr, prompt)
	b, err := term.ReadPassword(int(os.Stdin.Fd()))
	fmt.Fprintln(os.Stderr)
	return string(b), err
}

// knownHostsFile checks guests' host keys trust-on-first-use: a guest it has no line for is
// added (and the user told), a guest whose key differs from its line is refused.
type knownHostsFile struct {
	path string
	warn io.Writer
}

func (k knownHostsFile) callback() ssh.HostKeyCallback {
	return func(hostname string, _ net.Addr, key ssh.PublicKey) error {
		if k.path == "" {
			return errors.New("no known hosts file (--known-hosts) to check the guest's host key against")
		}
		host := knownhosts.Normalize(hostname)
		known, err := k.keys(host)
		if err != nil {
			return err
		}
		for _, line := range known {
			if bytes.Equal(line.key.Marshal(), key.Marshal()) {
				return nil
			}
		}
		if len(known) > 0 {
			return fmt.Errorf("the host key of %s has CHANGED (now %s %s, line %d of %s has another): "+
				"someone may be intercepting the connection, or the guest was reinstalled; remove that line if you trust the new key",
				host, key.Type(), ssh.FingerprintSHA256(key), known[0].number, k.path)
		}
		return k.add(host, key)
	}
}

type knownKey struct {
	key    ssh.PublicKey
	number int
}

// keys are the keys the file holds for host (exact names; hashed lines are not matched).
func (k knownHostsFile) keys(host string) ([]knownKey, error) {
	data, err := os.ReadFile(k.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []knownKey
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		marker, hosts, key, _, _, err := ssh.ParseKnownHosts(sc.Bytes())
		if err != nil || marker != "" {
			continue // comments, blank lines, @cert-authority and @revoked
		}
		for _, h := range hosts {
			if h == host {
				out = append(out, knownKey{key, n})
			}
		}
	}
	return out, sc.Err()
}

func (k knownHostsFile) add(host string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(k.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, knownhosts.Line([]string{host}, key)); err != nil {
		return err
	}
	fmt.Fprintf(k.warn, "Warning: permanently added '%s' (%s %s) to %s.\n", host, key.Type(), ssh.FingerprintSHA256(key), k.path)
	return nil
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
