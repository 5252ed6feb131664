//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// instanceManifest is the test guest as an instance, in the JSON `kubectl apply -f -` reads.
func instanceManifest(t *testing.T, name string, edit func(*v1.VirtualMachineInstance)) string {
	t.Helper()
	vmi := &v1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       framework.TestGuestSpec(name),
	}
	edit(vmi)
	out, err := json.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// applyRefused applies manifest, which virt-api must refuse naming field because of why.
func applyRefused(t *testing.T, f *framework.Framework, manifest, field, why string) {
	t.Helper()
	out, err := f.KubectlAs(f.Kubeconfig, manifest, "apply", "-f", "-")
	if err == nil {
		t.Fatalf("kubectl apply succeeded; want a refusal of %s:\n%s", field, out)
	}
	if !strings.Contains(out, field+":") || !strings.Contains(out, why) {
		t.Fatalf("kubectl apply said:\n%s\nwant it to name %s and say %q", out, field, why)
	}
	t.Logf("refused as it should be: %s", strings.TrimSpace(out))
}

// TestAdmissionRefusesWhatTheNodeCannotRun: kubectl apply of a guest that could never start
// (1Mi of memory, a 64Ti emptyDisk) fails at once with the field and the reason, and nothing
// is created; an instance's spec cannot be edited once created, its labels can.
func TestAdmissionRefusesWhatTheNodeCannotRun(t *testing.T) {
	f := framework.New(t)
	for _, tc := range []struct {
		name, field, why string
		edit             func(*v1.VirtualMachineInstance)
	}{
		{name: "tiny", field: "spec.domain.memory.guest", why: "too small for a guest to boot", edit: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Memory = &v1.Memory{Guest: ptr.To(resource.MustParse("1Mi"))}
		}},
		{name: "huge-disk", field: "spec.volumes[0].emptyDisk.capacity", why: "--max-empty-disk-capacity", edit: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "scratch",
				VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("64Ti")}}})
			vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, v1.Disk{Name: "scratch"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			applyRefused(t, f, instanceManifest(t, tc.name, tc.edit), tc.field, tc.why)
			_, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), tc.name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("a refused instance exists: %v", err)
			}
		})
	}

	t.Run("spec edit", func(t *testing.T) {
		same := func(*v1.VirtualMachineInstance) {}
		if out, err := f.KubectlAs(f.Kubeconfig, instanceManifest(t, "fixed", same), "apply", "-f", "-"); err != nil {
			t.Fatalf("kubectl apply of a valid instance: %v\n%s", err, out)
		}
		applyRefused(t, f, instanceManifest(t, "fixed", func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Hostname = "renamed" }),
			"spec.hostname", "update of VMI object is restricted")
		labelled := instanceManifest(t, "fixed", func(vmi *v1.VirtualMachineInstance) { vmi.Labels = map[string]string{"tier": "web"} })
		if out, err := f.KubectlAs(f.Kubeconfig, labelled, "apply", "-f", "-"); err != nil {
			t.Fatalf("kubectl apply of a label: %v\n%s", err, out)
		}
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "fixed", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if vmi.Labels["tier"] != "web" || vmi.Spec.Hostname != "" {
			t.Fatalf("instance after the edits: labels %v, hostname %q; want tier=web and no hostname, as created", vmi.Labels, vmi.Spec.Hostname)
		}
	})
}
