//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestVNCShowsTheGuestsDisplay: as in KubeVirt, a guest has a display unless
// autoattachGraphicsDevice is false, and `virtctl vnc` reaches it: with --proxy-only it prints
// the local port, where a VNC client gets QEMU's server for that guest (the RFB handshake, the
// screen size and the guest's name); `virtctl vnc screenshot` saves the screen as a PNG. A
// guest without a display is refused, saying why.
func TestVNCShowsTheGuestsDisplay(t *testing.T) {
	f := framework.New(t)
	headless := framework.TestGuestSpec("headless")
	headless.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "headless"}, Spec: headless})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "shown"}, Spec: framework.TestGuestSpec("shown")})
	shown := f.WaitVMIPhase("shown", v1.Running, 3*time.Minute)
	f.WaitVMIPhase("headless", v1.Running, 3*time.Minute)
	// The screen changes mode while the firmware and the kernel start (QEMU's 640x480, then
	// the VGA BIOS's 720x400 text): compare the handshake and the screenshot once it booted.
	f.WaitConsole(f.FollowConsole(f.LauncherPod(shown)), framework.GuestMarker, bootTimeout)

	bin, err := framework.VirtctlBinary()
	if err != nil {
		t.Fatal(err)
	}
	port := startVNCProxy(t, f, bin, "shown")
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	width, height, name, err := rfbHandshake(conn)
	if err != nil {
		t.Fatalf("VNC handshake: %v", err)
	}
	t.Logf("display %dx%d named %q", width, height, name)
	if width == 0 || height == 0 || !strings.Contains(name, "shown") {
		t.Errorf("display %dx%d named %q; want a screen of the guest shown", width, height, name)
	}

	// The same screen as an image.
	file := filepath.Join(t.TempDir(), "shown.png")
	if out, err := f.Virtctl("vnc", "screenshot", "shown", "--file", file); err != nil {
		t.Fatalf("virtctl vnc screenshot: %v\n%s", err, out)
	}
	img, err := readPNG(file)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != int(width) || b.Dy() != int(height) {
		t.Errorf("screenshot of %v, want the display's %dx%d", b, width, height)
	}

	for _, args := range [][]string{{"vnc", "--proxy-only", "headless"}, {"vnc", "screenshot", "headless", "--file", file + ".2"}} {
		out, err := f.Virtctl(args...)
		if err == nil || !strings.Contains(out, handlerapi.NoDisplay) {
			t.Errorf("virtctl %s of a guest without a display: %v\n%s\nwant a refusal saying %q", strings.Join(args, " "), err, out, handlerapi.NoDisplay)
		}
	}
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

var vncPort = regexp.MustCompile(`\{"port":(\d+)\}`)

// startVNCProxy runs `virtctl vnc --proxy-only name` until the test ends, and returns the
// port it prints.
func startVNCProxy(t *testing.T, f *framework.Framework, bin, name string) int {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(bin, "--kubeconfig", f.Kubeconfig, "-n", f.Namespace, "vnc", "--proxy-only", name)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("virtctl vnc:\n%s", out)
	})
	var port int
	f.Eventually(30*time.Second, "virtctl vnc to listen", func(context.Context) (bool, error) {
		if m := vncPort.FindStringSubmatch(out.String()); m != nil {
			port, _ = strconv.Atoi(m[1])
			return true, nil
		}
		return false, nil
	})
	return port
}

// rfbHandshake is a VNC client's start (RFB 3.8, RFC 6143) against a server without
// authentication: it returns the screen size and the desktop's name from ServerInit.
func rfbHandshake(rw io.ReadWriter) (width, height uint16, name string, err error) {
	version := make([]byte, 12)
	if _, err = io.ReadFull(rw, version); err != nil {
		return 0, 0, "", fmt.Errorf("reading the version: %w", err)
	}
	if !strings.HasPrefix(string(version), "RFB 003.") {
		return 0, 0, "", fmt.Errorf("not an RFB server: %q", version)
	}
	if _, err = rw.Write([]byte("RFB 003.008\n")); err != nil {
		return 0, 0, "", err
	}
	var count [1]byte
	if _, err = io.ReadFull(rw, count[:]); err != nil || count[0] == 0 {
		return 0, 0, "", fmt.Errorf("security types: %d, %v", count[0], err)
	}
	types := make([]byte, count[0])
	if _, err = io.ReadFull(rw, types); err != nil {
		return 0, 0, "", err
	}
	if !strings.ContainsRune(string(types), 1) {
		return 0, 0, "", fmt.Errorf("security types %v offer no None (1)", types)
	}
	if _, err = rw.Write([]byte{1}); err != nil {
		return 0, 0, "", err
	}
	var result uint32
	if err = binary.Read(rw, binary.BigEndian, &result); err != nil || result != 0 {
		return 0, 0, "", fmt.Errorf("security result %d, %v", result, err)
	}
	if _, err = rw.Write([]byte{1}); err != nil { // ClientInit: share the desktop
		return 0, 0, "", err
	}
	var init struct {
		Width, Height uint16
		PixelFormat   [16]byte
		NameLength    uint32
	}
	if err = binary.Read(rw, binary.BigEndian, &init); err != nil {
		return 0, 0, "", fmt.Errorf("ServerInit: %w", err)
	}
	if init.NameLength > 1024 {
		return 0, 0, "", fmt.Errorf("ServerInit: a name of %d bytes", init.NameLength)
	}
	desktop := make([]byte, init.NameLength)
	if _, err = io.ReadFull(rw, desktop); err != nil {
		return 0, 0, "", err
	}
	return init.Width, init.Height, string(desktop), nil
}
