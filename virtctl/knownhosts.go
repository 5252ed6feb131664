package virtctl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

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
