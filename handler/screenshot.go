package handler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strconv"
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
	image, err := s.Controller.screenshot(namespace, name)
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

// screenshot reads namespace/name's display through its launcher's libvirtd, as a PNG:
// libvirt's QEMU driver sends one where QEMU can write it (QEMU 7.1 on), else QEMU's PPM,
// which is converted. Either is checked before it is passed on.
func (c *Controller) screenshot(namespace, name string) ([]byte, error) {
	vmi, lv, err := c.dialRunning(namespace, name)
	if err != nil {
		return nil, err
	}
	defer func() { go closeQuietly(lv) }()
	if !vmi.Spec.Domain.Devices.GraphicsAttached() {
		return nil, &streamError{http.StatusBadRequest, handlerapi.NoDisplay}
	}
	buf := &boundedBuffer{max: maxScreenshot}
	if _, err := lv.Screenshot(DomainName(vmi), buf); err != nil {
		return nil, err
	}
	data := buf.bytes()
	if bytes.HasPrefix(data, pngSignature) {
		if _, err := png.DecodeConfig(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("the screenshot's PNG: %w", err)
		}
		return data, nil
	}
	img, err := decodePPM(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
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

// decodePPM reads a binary PPM (P6, maxval 255), what QEMU's screendump writes: no library
// the project uses reads it.
func decodePPM(r io.Reader) (image.Image, error) {
	br := bufio.NewReader(r)
	var header [4]string // P6, width, height, maxval
	for i := range header {
		tok, err := ppmToken(br)
		if err != nil {
			return nil, fmt.Errorf("PPM header: %w", err)
		}
		header[i] = tok
	}
	width, errW := strconv.Atoi(header[1])
	height, errH := strconv.Atoi(header[2])
	if header[0] != "P6" || header[3] != "255" || errW != nil || errH != nil || width <= 0 || height <= 0 || width*height*3 > maxScreenshot {
		return nil, fmt.Errorf("unsupported PPM header %q", header)
	}
	pixels := make([]byte, width*height*3)
	if _, err := io.ReadFull(br, pixels); err != nil {
		return nil, fmt.Errorf("PPM pixels: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for i := range width * height {
		img.Set(i%width, i/width, color.RGBA{R: pixels[3*i], G: pixels[3*i+1], B: pixels[3*i+2], A: 255})
	}
	return img, nil
}

// ppmToken reads the header's next token and the one whitespace byte that ends it, skipping
// whitespace and # comments before it.
func ppmToken(br *bufio.Reader) (string, error) {
	var tok []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case b == '#' && len(tok) == 0:
			if _, err := br.ReadString('\n'); err != nil {
				return "", err
			}
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			if len(tok) > 0 {
				return string(tok), nil
			}
		case len(tok) >= 16:
			return "", errors.New("a header field longer than 16 bytes")
		default:
			tok = append(tok, b)
		}
	}
}
