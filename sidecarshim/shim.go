// Package sidecarshim is KubeVirt's sidecar-shim: a hook sidecar that serves the hook
// protocol (pkg/hooks) and runs an executable of its image, or a script a ConfigMap put
// there, for each hook point it finds:
//
//	/usr/bin/onDefineDomain --vmi <instance JSON> --domain <domain XML>  -> the domain XML, on stdout
//	/usr/bin/preCloudInitIso --vmi <instance JSON> --cloud-init <CloudInitData JSON>  -> the CloudInitData JSON, on stdout
package sidecarshim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/hooks"
)

// Options are the shim's flags.
type Options struct {
	// Version is the Callbacks version served (KubeVirt's --version).
	Version string
	// SocketsDir is where the socket goes (hooks.SocketsDir).
	SocketsDir string
}

// The executables run for each hook point, found in $PATH as KubeVirt's shim finds them: an
// image's own binaries, or ConfigMap scripts mounted at their hookPath (/usr/bin/onDefineDomain
// in KubeVirt's examples).
const (
	onDefineDomainHook  = "onDefineDomain"
	preCloudInitIsoHook = "preCloudInitIso"
)

// maxStderr bounds what a failing hook's stderr adds to its error.
const maxStderr = 4096

// Run serves until ctx ends, then removes the socket.
func Run(ctx context.Context, o Options) error {
	if !slices.Contains(hooks.Versions, o.Version) {
		return fmt.Errorf("--version %q: want one of %s", o.Version, strings.Join(hooks.Versions, ", "))
	}
	info := &hooks.Info{Name: "shim", Versions: []string{o.Version}}
	var h hooks.Hooks
	if hook, ok := lookHook(onDefineDomainHook); ok {
		info.HookPoints = append(info.HookPoints, &hooks.HookPoint{Name: hooks.OnDefineDomain})
		h.OnDefineDomain = func(ctx context.Context, domainXML, vmi []byte) ([]byte, error) {
			return runHook(ctx, hook, "--vmi", string(vmi), "--domain", string(domainXML))
		}
	}
	// v1alpha1 has no PreCloudInitIso.
	if hook, ok := lookHook(preCloudInitIsoHook); ok && o.Version != "v1alpha1" {
		info.HookPoints = append(info.HookPoints, &hooks.HookPoint{Name: hooks.PreCloudInitIso})
		h.PreCloudInitIso = func(ctx context.Context, data, vmi []byte) ([]byte, error) {
			return runHook(ctx, hook, "--vmi", string(vmi), "--cloud-init", string(data))
		}
	}
	// One socket per process: the pod shares its PID namespace, so the name is unique there,
	// and a restarted shim does not take over its predecessor's socket.
	sock := filepath.Join(o.SocketsDir, fmt.Sprintf("shim-%d.sock", os.Getpid()))
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	defer os.Remove(sock)
	srv := hooks.NewServer(info, h)
	go func() {
		<-ctx.Done()
		srv.Stop()
	}()
	klog.InfoS("serving hooks", "socket", sock, "version", o.Version, "hookPoints", info.HookPoints)
	if err := srv.Serve(lis); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// lookHook finds a hook point's executable in $PATH.
func lookHook(name string) (string, bool) {
	path, err := exec.LookPath(name)
	if err != nil {
		klog.InfoS("no hook to run for this hook point", "reason", err)
		return "", false
	}
	return path, true
}

// runHook runs the hook and returns its standard output; a failure carries its stderr.
func runHook(ctx context.Context, hook string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, hook, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > maxStderr {
			msg = msg[len(msg)-maxStderr:]
		}
		return nil, fmt.Errorf("%s: %w: %s", hook, err, msg)
	}
	if stdout.Len() == 0 {
		return nil, errors.New(hook + " wrote nothing on its standard output")
	}
	return stdout.Bytes(), nil
}
