//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestTheGuestMountsFilesystemsThroughVirtiofs: KubeVirt's filesystems. A ConfigMap and a
// claim shared through virtiofs, each by a virtiofsd of its own in the launcher pod; the
// guest mounts them by their names (`mount -t virtiofs NAME`), reads the ConfigMap's key and
// the claim's file, and writes into the claim what then lies in its volume. An edit of the
// ConfigMap reaches the running guest. As in KubeVirt, such an instance cannot live-migrate.
func TestTheGuestMountsFilesystemsThroughVirtiofs(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"greeting": "hello-from-the-configmap"}})
	var volumeDir string
	f.FilesClaim("shared", resource.MustParse("16Mi"), func(dir string) {
		volumeDir = dir
		if err := os.WriteFile(filepath.Join(dir, "note"), []byte("from-the-claim\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	spec := framework.TestGuestSpec("fs")
	spec.Domain.Devices.Filesystems = []v1.Filesystem{{Name: "app", Virtiofs: &v1.FilesystemVirtiofs{}}, {Name: "data", Virtiofs: &v1.FilesystemVirtiofs{}}}
	spec.Volumes = append(spec.Volumes,
		v1.Volume{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app"}}},
		v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: spec})
	vmi := f.WaitVMIPhase("fs", v1.Running, bootTimeout)

	for query, want := range map[string]string{
		"virtiofs?app/greeting":              "hello-from-the-configmap",
		"virtiofs?data/note":                 "from-the-claim",
		"virtiofs?data/written=by-the-guest": "by-the-guest",
	} {
		if got := guestCGI(t, f, vmi, query); got != want {
			t.Errorf("/cgi-bin/%s: %q, want %q", query, got, want)
		}
	}
	if data, err := os.ReadFile(filepath.Join(volumeDir, "written")); err != nil || strings.TrimSpace(string(data)) != "by-the-guest" {
		t.Errorf("the claim's volume holds %q (%v), want what the guest wrote", data, err)
	}

	// The kubelet updates a ConfigMap's volume in place: the running guest reads the new value.
	cm, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(f.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "hello-again"
	if _, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Update(f.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually(3*time.Minute, "the guest to read the ConfigMap's new value", func(ctx context.Context) (bool, error) {
		return guestCGI(t, f, vmi, "virtiofs?app/greeting") == "hello-again", nil
	})

	var containers []string
	for _, c := range f.LauncherPod(vmi).Spec.InitContainers {
		if strings.HasPrefix(c.Name, "virtiofs-") {
			containers = append(containers, c.Name)
		}
	}
	if strings.Join(containers, ",") != "virtiofs-app,virtiofs-data" {
		t.Errorf("the launcher pod's virtiofsd containers: %v, want one per filesystem", containers)
	}
	migratable := "no LiveMigratable condition"
	for _, c := range f.WaitVMIPhase("fs", v1.Running, bootTimeout).Status.Conditions {
		if c.Type == v1.VirtualMachineInstanceIsMigratable {
			migratable = string(c.Status) + " " + c.Reason
		}
	}
	if want := "False " + v1.VirtualMachineInstanceReasonVirtIOFSNotMigratable; migratable != want {
		t.Errorf("LiveMigratable: %s, want %s", migratable, want)
	}
}
