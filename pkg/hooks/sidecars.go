// Package hooks is KubeVirt's hook sidecar interface: the annotation that asks for sidecars
// (read by virt-api, virt-controller and virt-handler), and the gRPC protocol virt-handler
// speaks with them over a unix socket (KubeVirt's kubevirt.hooks.info and
// kubevirt.hooks.v1alpha1-3 services), which the project's sidecar-shim serves.
package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

const (
	// SidecarsAnnotation lists an instance's hook sidecars as JSON (KubeVirt's name).
	SidecarsAnnotation = "hooks.kubevirt.io/hookSidecars"
	// SocketsDir is where a sidecar creates its socket, in an emptyDir of the launcher pod.
	SocketsDir = "/var/run/kubevirt-hooks"
	// SocketsVolume is that emptyDir's name in the pod (KubeVirt's).
	SocketsVolume = "hook-sidecar-sockets"
)

// Sidecar is one entry of the annotation, as KubeVirt reads it.
type Sidecar struct {
	Image           string            `json:"image,omitempty"`
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	Command         []string          `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	// ConfigMap puts one key of a ConfigMap at HookPath in the sidecar, executable: the hook
	// the sidecar-shim runs (/usr/bin/onDefineDomain, /usr/bin/preCloudInitIso).
	ConfigMap *ConfigMap `json:"configMap,omitempty"`
	// PVC mounts a claim in the sidecar at VolumePath and, with SharedComputePath, in the
	// compute container too: files the hook puts in the domain (a firmware, a wrapper of
	// QEMU, a disk image) that QEMU then opens.
	PVC *PVC `json:"pvc,omitempty"`
}

// ConfigMap is a sidecar's hook script from a ConfigMap.
type ConfigMap struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	HookPath string `json:"hookPath"`
}

// PVC is a claim mounted in a sidecar (KubeVirt's field names).
type PVC struct {
	Name              string `json:"name"`
	VolumePath        string `json:"volumePath"`
	SharedComputePath string `json:"sharedComputePath,omitempty"`
}

// Sidecars parses the annotation; none when it is absent. A field KubeVirt does not have is
// an error, so a typo is not silently dropped.
func Sidecars(annotations map[string]string) ([]Sidecar, error) {
	raw, ok := annotations[SidecarsAnnotation]
	if !ok {
		return nil, nil
	}
	var list []Sidecar
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("not a JSON list of hook sidecars: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not a JSON list of hook sidecars: data after the list")
	}
	return list, nil
}

// ContainerName is the launcher pod's container of the i-th sidecar (KubeVirt's name).
func ContainerName(i int) string { return fmt.Sprintf("hook-sidecar-%d", i) }

// ScriptVolume is the pod volume of the i-th sidecar's ConfigMap.
func ScriptVolume(i int) string { return fmt.Sprintf("hook-sidecar-%d-script", i) }

// ClaimVolume is the pod volume of the i-th sidecar's claim.
func ClaimVolume(i int) string { return fmt.Sprintf("hook-sidecar-%d-claim", i) }
