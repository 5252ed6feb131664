package handler

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

// serveHook serves a hook sidecar on a socket of the pod's sockets volume.
func serveHook(t *testing.T, dir, socket string, info *hooks.Info, h hooks.Hooks) {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(dir, socket))
	if err != nil {
		t.Fatal(err)
	}
	srv := hooks.NewServer(info, h)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
}

// hookPod is a launcher pod whose compute container and first hook sidecar started at started
// and whose second hook sidecar crash-loops, with its sockets directory under a kubelet root.
func hookPod(t *testing.T, started metav1.Time) (root string, pod *corev1.Pod, socketsDir string) {
	t.Helper()
	// Under /tmp: socket paths stay short, though the handler dials through /proc/self/fd.
	root, err := os.MkdirTemp("", "hooks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID("pod-1")}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: hooks.ContainerName(0), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}},
		{Name: hooks.ContainerName(1), State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
	}
	socketsDir = podVolumeDir(root, pod.UID, "kubernetes.io~empty-dir", hooks.SocketsVolume)
	if err := os.MkdirAll(socketsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, pod, socketsDir
}

func TestOnDefineDomain(t *testing.T) {
	const domXML = `<domain type="qemu"><name>ns_vm</name></domain>`
	started := metav1.NewTime(time.Unix(1000, 0))
	withSidecars := func(n int) *v1.VirtualMachineInstance {
		list := strings.TrimSuffix(strings.Repeat(`{"image": "hook"},`, n), ",")
		return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm",
			Annotations: map[string]string{hooks.SidecarsAnnotation: "[" + list + "]"}}}
	}
	// appendComment is a hook that marks the domain with its name.
	appendComment := func(mark string) hooks.Hooks {
		return hooks.Hooks{OnDefineDomain: func(_ context.Context, domainXML, vmi []byte) ([]byte, error) {
			if !strings.Contains(string(vmi), `"kind":"VirtualMachineInstance"`) {
				t.Errorf("the hook got no whole instance: %s", vmi)
			}
			return []byte(strings.Replace(string(domainXML), "</domain>", "<!--"+mark+"--></domain>", 1)), nil
		}}
	}
	for _, tc := range []struct {
		name    string
		vmi     *v1.VirtualMachineInstance
		serve   func(t *testing.T, dir string)
		now     time.Time
		want    string
		wantErr string
		spec    bool
	}{
		{name: "no sidecars", vmi: &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}, want: domXML},
		{name: "by priority, then name", vmi: withSidecars(3), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "b.sock", &hooks.Info{Name: "b", Versions: []string{"v1alpha2"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain}}}, appendComment("b"))
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha2"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain}}}, appendComment("a"))
			serveHook(t, dir, "c.sock", &hooks.Info{Name: "c", Versions: []string{"v1alpha1"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain, Priority: 5}}}, appendComment("c"))
		}, want: `<domain type="qemu"><name>ns_vm</name><!--c--><!--a--><!--b--></domain>`},
		{name: "a sidecar without the hook point is asked nothing", vmi: withSidecars(1), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha3"}}, appendComment("a"))
		}, want: domXML},
		{name: "a socket is missing: wait", vmi: withSidecars(2), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha2"}}, appendComment("a"))
		}, now: started.Add(time.Second), wantErr: errHooksNotReady.Error()},
		{name: "a socket is missing a minute after the start: fail", vmi: withSidecars(2), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha2"}}, appendComment("a"))
		}, now: started.Add(2 * time.Minute), wantErr: "1 of 2 serve the hook protocol in /var/run/kubevirt-hooks 1m0s after the pod started (hook-sidecar-1: CrashLoopBackOff)", spec: true},
		{name: "a stale socket does not count", vmi: withSidecars(1), serve: func(t *testing.T, dir string) {
			lis, err := net.Listen("unix", filepath.Join(dir, "old.sock"))
			if err != nil {
				t.Fatal(err)
			}
			lis.(*net.UnixListener).SetUnlinkOnClose(false)
			lis.Close()
		}, now: started.Add(time.Second), wantErr: errHooksNotReady.Error()},
		{name: "an unknown version", vmi: withSidecars(1), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v2"}}, appendComment("a"))
		}, wantErr: "speaks hook versions [v2]", spec: true},
		{name: "a domain that does not parse", vmi: withSidecars(1), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha2"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain}}},
				hooks.Hooks{OnDefineDomain: func(context.Context, []byte, []byte) ([]byte, error) { return []byte("<domain"), nil }})
		}, wantErr: "returned a domain that does not parse", spec: true},
		{name: "a renamed domain", vmi: withSidecars(1), serve: func(t *testing.T, dir string) {
			serveHook(t, dir, "a.sock", &hooks.Info{Name: "a", Versions: []string{"v1alpha2"}, HookPoints: []*hooks.HookPoint{{Name: hooks.OnDefineDomain}}},
				hooks.Hooks{OnDefineDomain: func(context.Context, []byte, []byte) ([]byte, error) {
					return []byte("<domain><name>other</name></domain>"), nil
				}})
		}, wantErr: `renamed the domain "ns_vm" to "other"`, spec: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, pod, dir := hookPod(t, started)
			if tc.serve != nil {
				tc.serve(t, dir)
			}
			c := &Controller{opts: Options{KubeletRoot: root}, clock: clocktesting.NewFakePassiveClock(tc.now)}
			sidecars, err := c.connectHooks(tc.vmi, pod)
			defer sidecars.close()
			var got []byte
			if err == nil {
				got, _, err = sidecars.onDefineDomain(DomainName(tc.vmi), []byte(domXML))
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || isSpecError(err) != tc.spec {
					t.Fatalf("err %v (spec error %v), want one containing %q (spec error %v)", err, isSpecError(err), tc.wantErr, tc.spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("domain\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
