package launcherpods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestInstanceKey(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "vmi-uid"}}
	launcher := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-web-x", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	tests := []struct {
		name    string
		obj     any
		wantKey string
		wantOK  bool
	}{
		{"launcher pod", launcher, "ns/web", true},
		{"tombstone of a launcher pod", cache.DeletedFinalStateUnknown{Key: "ns/virt-launcher-web-x", Obj: launcher}, "ns/web", true},
		{"pod without an instance", other, "", false},
		{"not a pod", vmi, "", false},
	}
	for _, tt := range tests {
		key, pod, ok := InstanceKey(tt.obj)
		if key != tt.wantKey || ok != tt.wantOK || (ok && pod.Name != launcher.Name) {
			t.Errorf("%s: key %q ok %v pod %v, want %q %v", tt.name, key, ok, pod, tt.wantKey, tt.wantOK)
		}
	}
}
