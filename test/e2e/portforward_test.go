//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// guestPage is on the test guest's HTTP page (hack/images/guest/init).
const guestPage = "vmctl testguest"

// TestPortForwardReachesTheGuest: the guest's port 80 answers through `virtctl port-forward`
// (instance and VM, listening and --stdio) and through `kubectl port-forward` to the launcher
// pod, whose 127.0.0.1 the masquerade binding sends to the guest.
func TestPortForwardReachesTheGuest(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("forwarded", v1.RunStrategyAlways))
	vmi := f.WaitVMIPhase("forwarded", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	virtctl := buildVirtctl(t)
	kubectl, err := apiserver.Tool("kubectl")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("virtctl vmi", func(t *testing.T) {
		port := startForward(t, f, virtctl, "port-forward", "vmi/forwarded", ":80")
		fetchGuestPage(t, f, port)
	})
	t.Run("virtctl vm, KubeVirt's NAME.NAMESPACE", func(t *testing.T) {
		local := freePort(t)
		port := startForward(t, f, virtctl, "port-forward", "vm/forwarded."+f.Namespace, strconv.Itoa(local)+":80")
		if port != local {
			t.Errorf("listening on %d, asked for %d", port, local)
		}
		fetchGuestPage(t, f, port)
	})
	t.Run("virtctl --stdio", func(t *testing.T) {
		var out string
		f.Eventually(2*time.Minute, "the guest's page over --stdio", func(ctx context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, virtctl, "--kubeconfig", f.Kubeconfig, "-n", f.Namespace, "port-forward", "--stdio", "vmi/forwarded", "80")
			cmd.Stdin = strings.NewReader("GET / HTTP/1.0\r\n\r\n")
			b, _ := cmd.CombinedOutput()
			out = string(b)
			return strings.Contains(out, guestPage), nil
		})
		if !strings.HasPrefix(out, "HTTP/1.") {
			t.Errorf("stdout is not the guest's answer alone:\n%s", out)
		}
	})
	t.Run("kubectl port-forward to the launcher pod", func(t *testing.T) {
		port := startForward(t, f, kubectl, "port-forward", "pod/"+pod.Name, ":80")
		fetchGuestPage(t, f, port)
	})
	t.Run("refusals", func(t *testing.T) {
		out, err := f.Virtctl("port-forward", "--stdio", "vm/absent", "22")
		if err == nil || !strings.Contains(out, "not found") {
			t.Errorf("a missing VM: %v\n%s", err, out)
		}
		out, err = f.Virtctl("port-forward", "--stdio", "vmi/forwarded", "0")
		if err == nil || !strings.Contains(out, "1-65535") {
			t.Errorf("port 0: %v\n%s", err, out)
		}
	})
}

// buildVirtctl is the virtctl under test, for commands that run in the background (the
// framework's Virtctl waits for its command to end).
func buildVirtctl(t *testing.T) string {
	t.Helper()
	bin, err := framework.VirtctlBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// lockedBuffer collects a background command's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var forwardingFrom = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// startForward runs a port-forward command (virtctl's or kubectl's) in the background until
// the test ends and returns the local port it listens on.
func startForward(t *testing.T, f *framework.Framework, bin string, args ...string) int {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", f.Kubeconfig, "-n", f.Namespace}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("%s %s:\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	})
	var port int
	f.Eventually(30*time.Second, filepath.Base(bin)+" to listen", func(context.Context) (bool, error) {
		if m := forwardingFrom.FindStringSubmatch(out.String()); m != nil {
			port, _ = strconv.Atoi(m[1])
			return true, nil
		}
		return false, nil
	})
	return port
}

// fetchGuestPage gets the guest's page through a local port; the guest may not serve yet.
func fetchGuestPage(t *testing.T, f *framework.Framework, port int) {
	t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	var body string
	f.Eventually(2*time.Minute, "the guest's page at "+url, func(ctx context.Context) (bool, error) {
		body, _ = getWithin(ctx, url, 20*time.Second)
		return strings.Contains(body, guestPage), nil
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
