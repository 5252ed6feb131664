package handler

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// The handler plumbs the pod network of the process behind the launcher's socket, and starts
// the domain only once the launcher serves the guest's DHCP.
func TestSyncPlumbsThePodNetworkBeforeTheDomain(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	if err := os.Remove(f.private(layout.NetworkReadyRel)); err != nil {
		t.Fatal(err)
	}

	if w := f.sync(); len(w) != 0 {
		t.Errorf("writes while the launcher's network is not ready: %v", w)
	}
	if d, _ := f.lv.counts(); d != 0 {
		t.Fatalf("%d domains defined before the guest's network was served", d)
	}
	if want := []string{"4242/" + string(testPodUID)}; !slices.Equal(f.plumbed, want) {
		t.Errorf("plumbed %v, want %v (the libvirtd peer's pid and the pod)", f.plumbed, want)
	}
	if f.c.queue.Len() != 0 {
		t.Error("the wait was queued at once, not after a delay")
	}

	// The launcher saw the bridge and serves DHCP: no second plumbing, the domain starts.
	if err := os.WriteFile(f.private(layout.NetworkReadyRel), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.sync()
	if d, s := f.lv.counts(); d != 1 || s != 1 {
		t.Errorf("defines, starts = %d, %d; want 1, 1", d, s)
	}
	if len(f.plumbed) != 1 {
		t.Errorf("plumbed again once the launcher was ready: %v", f.plumbed)
	}
}

func TestSyncReportsAFailedPlumbing(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	_ = os.Remove(f.private(layout.NetworkReadyRel))
	f.plumbErr = errors.New("process 4242 is not in pod's cgroup")

	if err := f.c.sync(f.t.Context(), "ns/web"); err == nil {
		t.Fatal("sync succeeded")
	}
	if c := condition(f.stored(), v1.VirtualMachineInstanceSynchronized); c == nil || !strings.Contains(c.Message, "setting up the pod network") {
		t.Errorf("Synchronized condition %+v, want the plumbing failure", c)
	}
}

func TestDomainTypeFollowsTheKVMDevice(t *testing.T) {
	kvmPod := func() *corev1.Pod {
		p := newPod(newInstance())
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{layout.KVMResource: resource.MustParse("1")}
		return p
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		emulation bool
		want      string
		invalid   bool
	}{
		{"KVM device, emulation allowed", kvmPod(), true, "kvm", false},
		{"KVM device, no emulation", kvmPod(), false, "kvm", false},
		{"no KVM device, emulation allowed", newPod(newInstance()), true, "qemu", false},
		{"no KVM device, no emulation", newPod(newInstance()), false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Controller{opts: Options{AllowEmulation: tt.emulation}}
			got, err := c.domainType(tt.pod)
			if got != tt.want || isSpecError(err) != tt.invalid {
				t.Errorf("domainType = %q, %v; want %q (invalid spec: %v)", got, err, tt.want, tt.invalid)
			}
		})
	}
}
