package subresources

import (
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// TestVNCRefusal: virt-api refuses VNC to a missing instance, one that does not run, and one
// without a display, before any handler is asked.
func TestVNCRefusal(t *testing.T) {
	headless := podNetworkInstance(v1.Running)
	headless.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
	for _, tc := range []struct {
		name string
		vmi  *v1.VirtualMachineInstance
		code int
		says string
	}{
		{"no instance", nil, 404, "not found"},
		{"not running", podNetworkInstance(v1.Scheduled), 409, "not Running"},
		{"no display", headless, 400, handlerapi.NoDisplay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			virt := fake.NewSimpleClientset()
			if tc.vmi != nil {
				virt = fake.NewSimpleClientset(tc.vmi)
			}
			h := &Handler{Virt: virt}
			w := httptest.NewRecorder()
			h.ServeVNC(w, httptest.NewRequest("GET", "/vnc", nil), "ns", "web", false)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.says) {
				t.Errorf("got %d %s, want %d saying %q", w.Code, w.Body.String(), tc.code, tc.says)
			}
		})
	}
}
