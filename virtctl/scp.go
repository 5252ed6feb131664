package virtctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"
)

// scpLocation is one side of a copy: a local path, or a path on a guest.
type scpLocation struct {
	remote bool
	user   string
	target target
	path   string
}

// parseSCPLocation reads [USER@]TYPE/NAME[/NAMESPACE]:PATH, TYPE vm or vmi, as a guest's
// path; anything else is a local path (./vm/x:y names a local file).
func parseSCPLocation(arg string) (scpLocation, error) {
	head, path, ok := strings.Cut(arg, ":")
	if !ok || !looksLikeTarget(head) {
		return scpLocation{path: arg}, nil
	}
	user, t, err := parseLogin(head)
	if err != nil {
		return scpLocation{}, err
	}
	if path == "" {
		path = "." // the login directory, as scp reads host:
	}
	return scpLocation{remote: true, user: user, target: t, path: path}, nil
}

// looksLikeTarget: head is [USER@]TYPE/..., TYPE one of the target types.
func looksLikeTarget(head string) bool {
	if _, rest, ok := strings.Cut(head, "@"); ok {
		head = rest
	}
	kind, _, ok := strings.Cut(head, "/")
	if !ok {
		return false
	}
	switch strings.ToLower(kind) {
	case "vm", "vms", "virtualmachine", "virtualmachines", "vmi", "vmis", "virtualmachineinstance", "virtualmachineinstances":
		return true
	}
	return false
}

func scpCommand(cl *clientLoader) *cobra.Command {
	o := &sshOptions{}
	var recursive bool
	cmd := &cobra.Command{
		Use:   "scp [-r] SRC DST",
		Short: "Copy files to or from a VM's or an instance's guest",
		Long: "One of SRC and DST is on the guest, written [USER@]TYPE/NAME[/NAMESPACE]:PATH; the copy\n" +
			"runs the scp protocol over an ssh session through the portforward subresource.",
		Example: "  virtctl scp ./app.tar fedora@vm/web:/tmp/\n  virtctl scp -r root@vmi/web/prod:/var/log ./logs",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := parseSCPLocation(args[0])
			if err != nil {
				return err
			}
			dst, err := parseSCPLocation(args[1])
			if err != nil {
				return err
			}
			if src.remote == dst.remote {
				return errors.New("exactly one of SRC and DST must be on a guest ([USER@]TYPE/NAME:PATH)")
			}
			remote := src
			if dst.remote {
				remote = dst
			}
			c, err := cl.clients()
			if err != nil {
				return err
			}
			if remote.target.namespace == "" {
				remote.target.namespace = c.Namespace
			}
			user := o.loginUser(remote.user)
			if o.localSSH {
				argv, err := localSSHArgs(cl, o, "scp", remote.target, cmd.Flags().Changed("known-hosts"))
				if err != nil {
					return err
				}
				if recursive {
					argv = append(argv, "-r")
				}
				spec := user + "@" + hostAlias(remote.target) + ":" + remote.path
				if src.remote {
					return runLocal(append(argv, spec, dst.path))
				}
				return runLocal(append(argv, src.path, spec))
			}
			client, err := o.connect(cmd.Context(), c, remote.target, user, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer client.Close()
			if src.remote {
				return scpDownload(client, src.path, dst.path, recursive)
			}
			return scpUpload(client, src.path, dst.path, recursive)
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "copy directories recursively")
	return cmd
}

// The scp protocol (OpenSSH's legacy one, which every scp including busybox's dropbear speaks
// as the remote end): the side that sends runs commands C (file), D (directory), E (end of
// directory) and T (times), each answered by the other side with one status byte, 0 for ok,
// 1 or 2 then a message line for a warning or an error.

// scpUpload copies local to remote on the guest, running `scp -t` there.
func scpUpload(client *ssh.Client, local, remote string, recursive bool) error {
	info, err := os.Stat(local)
	if err != nil {
		return err
	}
	if info.IsDir() && !recursive {
		return fmt.Errorf("%s is a directory (use -r)", local)
	}
	flags := "-t"
	if recursive {
		flags = "-r -t"
	}
	return runSCP(client, "scp "+flags+" "+shellQuote(remote), func(w io.Writer, r *bufio.Reader) error {
		if err := scpAck(r); err != nil {
			return err
		}
		return scpSend(w, r, local, info)
	})
}

// scpDownload copies remote on the guest to local, running `scp -f` there.
func scpDownload(client *ssh.Client, remote, local string, recursive bool) error {
	flags := "-f"
	if recursive {
		flags = "-r -f"
	}
	return runSCP(client, "scp "+flags+" "+shellQuote(remote), func(w io.Writer, r *bufio.Reader) error {
		return scpReceive(w, r, local, recursive)
	})
}

// runSCP runs command on the guest and speaks the protocol with it through fn. What the
// remote scp says on stderr is part of the error.
func runSCP(client *ssh.Client, command string, fn func(io.Writer, *bufio.Reader) error) error {
	session, err := client.NewSession()
	if err != nil {
		return err
	}
	defer session.Close()
	w, err := session.StdinPipe()
	if err != nil {
		return err
	}
	out, err := session.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	session.Stderr = &stderr
	if err := session.Start(command); err != nil {
		return err
	}
	err = fn(w, bufio.NewReader(out))
	_ = w.Close()
	werr := session.Wait()
	if err == nil && werr != nil {
		err = fmt.Errorf("remote scp: %w", werr)
	}
	if err != nil && stderr.Len() > 0 {
		err = fmt.Errorf("%w (%s)", err, strings.TrimSpace(stderr.String()))
	}
	return err
}
