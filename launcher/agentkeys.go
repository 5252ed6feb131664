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

// How often the keys are read, and how often they are set again although unchanged: a guest
// that rebooted from its image, or whose user edited the file, gets them back.
var (
	agentKeysPoll    = 10 * time.Second
	agentKeysRefresh = time.Minute
)

// setKeys sets one user's authorized keys in the guest (virDomainAuthorizedSSHKeysSet).
type setKeys func(user string, keys []string) error

// propagateKeys keeps every AgentKeys' keys set in the guest until ctx ends. A guest whose
// agent does not answer (yet) is tried again at the next poll.
func propagateKeys(ctx context.Context, sets []AgentKeys, set setKeys) {
	type done struct {
		keys []string
		at   time.Time
	}
	last := map[string]done{} // by user
	for {
		for _, s := range sets {
			keys, err := readKeys(s.Dir)
			if err != nil {
				klog.ErrorS(err, "reading SSH keys for the guest agent", "dir", s.Dir)
				continue
			}
			if len(keys) == 0 {
				// A missing Secret (its mount is optional) or one without keys: the guest's keys
				// are left as they are rather than wiped.
				klog.V(2).InfoS("no SSH keys for the guest agent to set", "dir", s.Dir)
				continue
			}
			for _, user := range s.Users {
				if d, ok := last[user]; ok && slices.Equal(d.keys, keys) && time.Since(d.at) < agentKeysRefresh {
					continue
				}
				if err := set(user, keys); err != nil {
					klog.V(2).InfoS("setting SSH keys through the guest agent", "user", user, "err", err)
					delete(last, user)
					continue
				}
				if d, ok := last[user]; !ok || !slices.Equal(d.keys, keys) {
					klog.InfoS("set SSH keys through the guest agent", "user", user, "keys", len(keys))
				}
				last[user] = done{keys, time.Now()}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(agentKeysPoll):
		}
	}
}

// readKeys is every key line of the Secret's files, in the order of their names.
func readKeys(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var keys []string
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
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
	}
	return keys, nil
}
