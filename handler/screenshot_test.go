package handler

import (
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

func TestDecodePPM(t *testing.T) {
	for _, tc := range []struct {
		name, ppm string
		err       string // "" for a 2x1 image, red then blue
	}{
		{"QEMU's", "P6\n2 1\n255\n\xff\x00\x00\x00\x00\xff", ""},
		{"comments and spaces", "P6 # screendump\n 2\t1 # size\n255\n\xff\x00\x00\x00\x00\xff", ""},
		{"ASCII PPM", "P3\n2 1\n255\n255 0 0 0 0 255\n", "unsupported PPM header"},
		{"16-bit", "P6\n2 1\n65535\n", "unsupported PPM header"},
		{"huge", "P6\n100000 100000\n255\n", "unsupported PPM header"},
		{"truncated", "P6\n2 1\n255\n\xff\x00", "PPM pixels"},
		{"endless field", "P6\n" + strings.Repeat("1", 100), "longer than 16 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := decodePPM(strings.NewReader(tc.ppm))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			red, blue := color.RGBAModel.Convert(img.At(0, 0)), color.RGBAModel.Convert(img.At(1, 0))
			if img.Bounds().Dx() != 2 || img.Bounds().Dy() != 1 || red != (color.RGBA{255, 0, 0, 255}) || blue != (color.RGBA{0, 0, 255, 255}) {
				t.Errorf("image %v: %v %v, want 2x1 red then blue", img.Bounds(), red, blue)
			}
		})
	}
}

// TestScreenshot: a running guest's display comes back as a PNG; a guest without a display,
// or not running, is refused.
func TestScreenshot(t *testing.T) {
	headless := func() *v1.VirtualMachineInstance {
		vmi := runningInstance()
		vmi.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
		return vmi
	}
	for _, tc := range []struct {
		name string
		vmi  func() *v1.VirtualMachineInstance
		ppm  bool
		code int
		says string
	}{
		{"running", runningInstance, false, 200, ""},
		{"a QEMU that writes PPM", runningInstance, true, 200, ""},
		{"no display", headless, false, 400, handlerapi.NoDisplay},
		{"not running", newInstance, false, 409, "not Running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := tc.vmi()
			f := newFixture(t, vmi, newPod(vmi))
			f.lv.set(domName, libvirt.DomainRunning, 1)
			f.lv.screenshotPPM = tc.ppm
			rec := httptest.NewRecorder()
			s := &StreamServer{Controller: f.c}
			s.routes().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, handlerapi.ScreenshotPath("ns", "web"), nil))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("%d %q, want %d saying %q", rec.Code, rec.Body, tc.code, tc.says)
			}
			if tc.code != 200 {
				return
			}
			img, err := png.Decode(rec.Body)
			if err != nil || rec.Header().Get("Content-Type") != "image/png" || img.Bounds().Dx() != 2 ||
				color.RGBAModel.Convert(img.At(1, 0)) != (color.RGBA{0, 0, 255, 255}) {
				t.Errorf("answer %s: %v, %v; want the 2x1 PNG, red then blue", rec.Header().Get("Content-Type"), img, err)
			}
		})
	}
}
