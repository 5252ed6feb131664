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
)

// The scp protocol as OpenSSH's scp -t (sink) and scp -f (source) speak it: one status byte
// per step, C/D/E lines for files and directories, the file's bytes after its line.

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
