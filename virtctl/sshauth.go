package virtctl

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/term"
)

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
