package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// AgentKeys are SSH public keys set through the guest agent, KubeVirt's qemuGuestAgent
// propagation: every key line of the Secret the kubelet mounts at Dir becomes the authorized
// keys of each of Users (replacing what the file had, as the Secret is the source of truth).
// The kubelet updates the mount when the Secret changes, and the guest follows.
type AgentKeys struct {
	Dir   string
	Users []string
}

// ParseAgentKeys reads --agent-ssh-keys DIR:USER[,USER...].
func ParseAgentKeys(s string) (AgentKeys, error) {
	dir, users, ok := strings.Cut(s, ":")
	if !ok || dir == "" || users == "" {
		return AgentKeys{}, fmt.Errorf("--agent-ssh-keys %q: want DIR:USER[,USER...]", s)
	}
	return AgentKeys{Dir: dir, Users: strings.Split(users, ",")}, nil
}

// How often the Secrets are read, and how often what they hold is set again although
// unchanged: a guest that rebooted from its image, or whose user edited the file, gets it
// back. Passwords are set again less often: each time is a chpasswd in the guest.
var (
	agentCredsPoll       = 10 * time.Second
	agentKeysRefresh     = time.Minute
	agentPasswordRefresh = 10 * time.Minute
)

// agentCredential is one kind of credential kept set in the guest through its agent.
type agentCredential struct {
	what    string // for the log: "SSH keys", "password"
	refresh time.Duration
	// read is what each user gets; a user left out is left as the guest has it.
	read func() (map[string][]string, error)
	// set gives one user its values in the guest.
	set func(user string, values []string) error
}

// keyCredentials are the SSH keys of every AgentKeys, set by set (virDomainAuthorizedSSHKeysSet).
func keyCredentials(sets []AgentKeys, set func(user string, keys []string) error) []agentCredential {
	creds := make([]agentCredential, 0, len(sets))
	for _, s := range sets {
		creds = append(creds, agentCredential{what: "SSH keys", refresh: agentKeysRefresh, set: set,
			read: func() (map[string][]string, error) {
				keys, err := readKeys(s.Dir)
				if err != nil || len(keys) == 0 {
					// A missing Secret (its mount is optional) or one without keys: the
					// guest's keys are left as they are rather than wiped.
					return nil, err
				}
				byUser := map[string][]string{}
				for _, u := range s.Users {
					byUser[u] = keys
				}
				return byUser, nil
			}})
	}
	return creds
}

// passwordCredentials are the passwords of the Secrets mounted at dirs, KubeVirt's userPassword
// with qemuGuestAgent: each key a user name, its value the password, set by set
// (virDomainSetUserPassword: the agent runs chpasswd in the guest).
func passwordCredentials(dirs []string, set func(user, password string) error) []agentCredential {
	creds := make([]agentCredential, 0, len(dirs))
	for _, dir := range dirs {
		creds = append(creds, agentCredential{what: "password", refresh: agentPasswordRefresh,
			read: func() (map[string][]string, error) { return readPasswords(dir) },
			set:  func(user string, values []string) error { return set(user, values[0]) }})
	}
	return creds
}

// propagateCredentials keeps every credential set in the guest until ctx ends. A guest whose
// agent does not answer (yet) is tried again at the next poll.
func propagateCredentials(ctx context.Context, creds []agentCredential) {
	type done struct {
		values []string
		at     time.Time
	}
	last := map[string]done{} // by what and user
	for {
		for _, c := range creds {
			byUser, err := c.read()
			if err != nil {
				klog.ErrorS(err, "reading a Secret for the guest agent", "credential", c.what)
				continue
			}
			users := make([]string, 0, len(byUser))
			for u := range byUser {
				users = append(users, u)
			}
			slices.Sort(users)
			for _, user := range users {
				values, key := byUser[user], c.what+"/"+user
				d, ok := last[key]
				if ok && slices.Equal(d.values, values) && time.Since(d.at) < c.refresh {
					continue
				}
				if err := c.set(user, values); err != nil {
					klog.V(2).InfoS("setting a credential through the guest agent", "credential", c.what, "user", user, "err", err)
					delete(last, key)
					continue
				}
				if !ok || !slices.Equal(d.values, values) {
					klog.InfoS("set a credential through the guest agent", "credential", c.what, "user", user)
				}
				last[key] = done{values, time.Now()}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(agentCredsPoll):
		}
	}
}

// secretFiles is every key of a Secret's mount and its value, in the order of the names.
// A missing mount (an optional Secret that does not exist) has none.
func secretFiles(dir string) ([][2]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files [][2]string
	for _, e := range entries {
		// The kubelet's mount holds each key as a symlink to ..data/<key>; its own entries
		// start with "..".
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files = append(files, [2]string{e.Name(), string(data)})
	}
	return files, nil
}

// readKeys is every key line of the Secret's files, in the order of their names.
func readKeys(dir string) ([]string, error) {
	files, err := secretFiles(dir)
	var keys []string
	for _, f := range files {
		for _, line := range strings.Split(f[1], "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
	}
	return keys, err
}

// readPasswords is each user's password: the Secret's keys are user names and their values
// the passwords, less one final newline (a Secret made from a file). A value that still holds
// a newline, or an empty one, is skipped with an error in the log: the agent refuses it.
func readPasswords(dir string) (map[string][]string, error) {
	files, err := secretFiles(dir)
	byUser := map[string][]string{}
	for _, f := range files {
		pw := strings.TrimSuffix(f[1], "\n")
		if pw == "" || strings.ContainsAny(pw, "\n\r") {
			klog.ErrorS(nil, "skipping a password that is empty or holds a line break", "dir", dir, "user", f[0])
			continue
		}
		byUser[f[0]] = []string{pw}
	}
	return byUser, err
}
