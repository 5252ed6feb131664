package virtctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

// scpAck reads the other side's status byte.
func scpAck(r *bufio.Reader) error {
	b, err := r.ReadByte()
	if err != nil {
		return fmt.Errorf("scp: %w", err)
	}
	switch b {
	case 0:
		return nil
	case 1, 2:
		msg, _ := r.ReadString('\n')
		return fmt.Errorf("remote scp: %s", strings.TrimSpace(msg))
	}
	return fmt.Errorf("scp: unexpected status byte %#x", b)
}

// scpSend sends path (a file, or a directory with everything below it).
func scpSend(w io.Writer, r *bufio.Reader, path string, info fs.FileInfo) error {
	name := filepath.Base(path)
	if strings.ContainsAny(name, "\n") {
		return fmt.Errorf("%q: a newline in a name cannot be sent", path)
	}
	if info.IsDir() {
		if _, err := fmt.Fprintf(w, "D%04o 0 %s\n", info.Mode().Perm(), name); err != nil {
			return err
		}
		if err := scpAck(r); err != nil {
			return err
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			child := filepath.Join(path, e.Name())
			ci, err := os.Stat(child)
			if err != nil {
				return err
			}
			if !ci.IsDir() && !ci.Mode().IsRegular() {
				continue // sockets, devices: scp copies files and directories
			}
			if err := scpSend(w, r, child, ci); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "E\n"); err != nil {
			return err
		}
		return scpAck(r)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := fmt.Fprintf(w, "C%04o %d %s\n", info.Mode().Perm(), info.Size(), name); err != nil {
		return err
	}
	if err := scpAck(r); err != nil {
		return err
	}
	if _, err := io.CopyN(w, f, info.Size()); err != nil {
		return fmt.Errorf("sending %s: %w", path, err)
	}
	if _, err := w.Write([]byte{0}); err != nil {
		return err
	}
	return scpAck(r)
}

// scpReceive takes what the guest's `scp -f` sends into local: into it when it is an
// existing directory, else as that name. Names the guest sends are single path elements,
// never "..", so a guest cannot write outside local.
func scpReceive(w io.Writer, r *bufio.Reader, local string, recursive bool) error {
	ok := func() error { _, err := w.Write([]byte{0}); return err }
	if err := ok(); err != nil {
		return err
	}
	var dirs []string // the directories being received, innermost last
	destination := func(name string) string {
		if len(dirs) > 0 {
			return filepath.Join(dirs[len(dirs)-1], name)
		}
		if st, err := os.Stat(local); err == nil && st.IsDir() {
			return filepath.Join(local, name)
		}
		return local
	}
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			if len(dirs) > 0 {
				return errors.New("scp: the guest ended inside a directory")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("scp: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch line[0] {
		case 1, 2:
			return fmt.Errorf("remote scp: %s", line[1:])
		case 'T':
			// Times: not kept.
		case 'E':
			if len(dirs) == 0 {
				return errors.New("scp: end of a directory never begun")
			}
			dirs = dirs[:len(dirs)-1]
		case 'C', 'D':
			mode, size, name, err := parseSCPHeader(line)
			if err != nil {
				return err
			}
			path := destination(name)
			if line[0] == 'D' {
				if !recursive {
					return errors.New("scp: the guest sent a directory without -r")
				}
				if err := os.MkdirAll(path, mode|0o700); err != nil {
					return err
				}
				dirs = append(dirs, path)
				break
			}
			if err := ok(); err != nil {
				return err
			}
			if err := receiveFile(r, path, mode, size); err != nil {
				return err
			}
			if err := scpAck(r); err != nil {
				return err
			}
		default:
			return fmt.Errorf("scp: unexpected %q from the guest", line)
		}
		if err := ok(); err != nil {
			return err
		}
	}
}

// parseSCPHeader reads "Cmmmm size name" or "Dmmmm 0 name".
func parseSCPHeader(line string) (fs.FileMode, int64, string, error) {
	fields := strings.SplitN(line[1:], " ", 3)
	if len(fields) != 3 {
		return 0, 0, "", fmt.Errorf("scp: bad header %q", line)
	}
	mode, err := strconv.ParseUint(fields[0], 8, 32)
	if err != nil {
		return 0, 0, "", fmt.Errorf("scp: bad mode in %q", line)
	}
	size, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil || size < 0 {
		return 0, 0, "", fmt.Errorf("scp: bad size in %q", line)
	}
	name := fields[2]
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return 0, 0, "", fmt.Errorf("scp: the guest sent an unsafe name %q", name)
	}
	return fs.FileMode(mode).Perm(), size, name, nil
}

func receiveFile(r io.Reader, path string, mode fs.FileMode, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return fmt.Errorf("receiving %s: %w", path, err)
	}
	return f.Close()
}
