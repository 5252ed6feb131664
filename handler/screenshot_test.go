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

// TestScreenshot: a running guest's display comes back as a PNG; a guest without a display,
// or not running, is refused.
func TestScreenshot(t *testing.T) {
	headless := func() *v1.VirtualMachineInstance {
		vmi := runningInstance()
		vmi.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
		return vmi
	}
	for _, tc := range []struct {
		name  string
		vmi   func() *v1.VirtualMachineInstance
		ppm   bool // the launcher's QEMU writes PPM, as before 7.1
		stall int  // calls that time out first
		cut   int  // calls whose image arrives without its start, after those
		code  int
		says  string
	}{
		{"running", runningInstance, false, 0, 0, 200, ""},
		{"an image cut twice, whole the third time", runningInstance, false, 0, 2, 200, ""},
		{"an image always cut", runningInstance, false, 0, 5, 500, "without its start"},
		{"a call that timed out, then a cut image, then whole", runningInstance, false, 1, 1, 200, ""},
		{"a call that always times out", runningInstance, false, 5, 0, 503, "did not answer"},
		{"a QEMU that writes PPM", runningInstance, true, 0, 0, 500, "not a PNG"},
		{"no display", headless, false, 0, 0, 400, handlerapi.NoDisplay},
		{"not running", newInstance, false, 0, 0, 409, "not Running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := tc.vmi()
			f := newFixture(t, vmi, newPod(vmi))
			f.lv.set(domName, libvirt.DomainRunning, 1)
			f.lv.screenshotPPM = tc.ppm
			f.lv.screenshotStall = tc.stall
			f.lv.screenshotCut = tc.cut
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
