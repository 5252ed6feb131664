package vmctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables a pod sets from the downward API (fieldRef metadata.name and
// metadata.namespace); the examples use them.
const (
	PodNameEnv      = "POD_NAME"
	PodNamespaceEnv = "POD_NAMESPACE"
)

// PodIdentity names the pod vmctl runs for.
type PodIdentity struct {
	Name      string
	Namespace string
}

// lookupPod finds the pod's name and namespace: --hostname-override first (vmctl outside a
// pod), then the environment, then the files "name" and "namespace" of a downward API volume.
// The PodPreset of the original vmctl is gone from Kubernetes, so pods say it themselves.
// A missing namespace is not an error: the caller falls back to --namespace.
func lookupPod(o *Options, getenv func(string) string) (PodIdentity, error) {
	id := PodIdentity{Name: getenv(PodNameEnv), Namespace: getenv(PodNamespaceEnv)}
	if id.Name == "" {
		id.Name = readPodinfo(o.PodinfoDir, "name")
	}
	if id.Namespace == "" {
		id.Namespace = readPodinfo(o.PodinfoDir, "namespace")
	}
	if o.HostnameOverride != "" {
		id.Name = o.HostnameOverride
	}
	if id.Name == "" {
		return id, fmt.Errorf("%w: the pod's name is unknown: set %s (downward API fieldRef metadata.name), mount a downward API volume with a file \"name\" at --podinfo-dir (%s), or pass --hostname-override",
			ErrUsage, PodNameEnv, o.PodinfoDir)
	}
	return id, nil
}

// readPodinfo reads one downward API file; absent or unreadable counts as unset.
func readPodinfo(dir, file string) string {
	if dir == "" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "vmctl: reading %s: %v\n", filepath.Join(dir, file), err)
		}
		return ""
	}
	return strings.TrimSpace(string(data))
}
