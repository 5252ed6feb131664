package handler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"sync"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// maxScreenshot bounds what libvirt may send for one screenshot: more than a 16 MiB VGA's
// largest screen, so a misbehaving launcher cannot make the handler hold more.
const maxScreenshot = 64 << 20

// screenshot answers GET vnc/screenshot: the guest's display as a PNG, as KubeVirt's.
func (s *StreamServer) screenshot(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	image, err := s.Controller.screenshot(r.Context(), namespace, name)
	if err != nil {
		status := errorStatus(err)
		klog.InfoS("screenshot refused", "vmi", namespace+"/"+name, "status", status, "err", err)
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(image)
}

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// screenshotAttempts bounds the tries for one screenshot. libvirtd can send the image before
// its reply to the call, which go-libvirt takes for the reply: the image then arrives without
// its start, or the call times out. The frame guard puts the reply first (screenshotOrder);
// should an image still go astray, the next try, on a new connection, gets it whole.
const screenshotAttempts = 3

// errCutScreenshot is a PNG screenshot that arrived without its start.
var errCutScreenshot = errors.New("the launcher's libvirtd sent a PNG screenshot without its start")

// screenshot reads namespace/name's display through its launcher's libvirtd, as a PNG:
// libvirt's QEMU driver has QEMU write one (QEMU 7.1 on; the launcher image has 7.2). It is
// checked before it is passed on.
func (c *Controller) screenshot(ctx context.Context, namespace, name string) ([]byte, error) {
	var err error
	for range screenshotAttempts {
		var data []byte
		data, err = c.screenshotOnce(ctx, namespace, name)
		if !errors.Is(err, errCutScreenshot) && !errors.Is(err, errLauncherUnresponsive) {
			return data, err
		}
	}
	return nil, err
}

func (c *Controller) screenshotOnce(ctx context.Context, namespace, name string) ([]byte, error) {
	vmi, lv, err := c.dialRunning(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	defer func() { go closeQuietly(lv) }()
	if !vmi.Spec.Domain.Devices.GraphicsAttached() {
		return nil, &streamError{http.StatusBadRequest, handlerapi.NoDisplay}
	}
	buf := &boundedBuffer{max: maxScreenshot}
	mime, err := lv.Screenshot(DomainName(vmi), buf)
	if err != nil {
		return nil, err
	}
	data := buf.bytes()
	if mime == "image/png" && !bytes.HasPrefix(data, pngSignature) {
		return nil, errCutScreenshot
	}
	if !bytes.HasPrefix(data, pngSignature) {
		return nil, fmt.Errorf("the launcher's QEMU sent a screenshot of type %q, not a PNG (QEMU 7.1 or later writes PNG)", mime)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("the screenshot's PNG: %w", err)
	}
	return data, nil
}

// boundedBuffer keeps at most max bytes; libvirt's stream writes to it from its own goroutine.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > b.max {
		return 0, fmt.Errorf("a screenshot larger than %d bytes", b.max)
	}
	return b.buf.Write(p)
}

func (b *boundedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}
