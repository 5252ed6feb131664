//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestPersistentTPMAndEFIStateOutliveTheInstance: a VM with `tpm.persistent` and
// `efi.persistent` gets its state claim, persistent-state-for-<VM>, from virt-controller (owned
// by the VM); an EFI variable the guest sets and the TPM's endorsement key are the same after
// `virtctl restart`, though the launcher pod is new; the instance says it cannot live-migrate;
// the claim goes when the VM is deleted.
func TestPersistentTPMAndEFIStateOutliveTheInstance(t *testing.T) {
	f := framework.New(t)
	dir := f.StatePV("keeper")
	spec := testguest.DiskSpec(resource.MustParse("256Mi"), &v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false), Persistent: ptr.To(true)}})
	spec.Domain.Devices.TPM = &v1.TPMDevice{Persistent: ptr.To(true)}
	f.CreateVM(&v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "keeper"}, Spec: v1.VirtualMachineSpec{
		RunStrategy: ptr.To(v1.RunStrategyAlways),
		Template:    &v1.VirtualMachineInstanceTemplateSpec{Spec: spec},
	}})
	f.WaitVMReady("keeper", bootTimeout)
	first := f.WaitVMIPhase("keeper", v1.Running, time.Minute)

	claim, err := f.Kube.CoreV1().PersistentVolumeClaims(f.Namespace).Get(f.Context(), "persistent-state-for-keeper", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if owners := claim.OwnerReferences; len(owners) != 1 || owners[0].Kind != "VirtualMachine" || owners[0].Name != "keeper" {
		t.Errorf("state claim owners %+v, want the VM", owners)
	}
	if c := first.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != "False" || !strings.Contains(c.Message, claim.Name) {
		t.Errorf("LiveMigratable %+v, want False naming %s", c, claim.Name)
	}
	value := fmt.Sprintf("v%d", time.Now().UnixNano())
	if got := guestCGI(t, f, first, "efivar?"+value); got != value {
		t.Fatalf("the guest set EFI variable VmctlTest to %q, want %q", got, value)
	}
	ek := guestCGI(t, f, first, "tpm?ek")
	// A ReadPublic answer: TPM_ST_NO_SESSIONS, a size, TPM_RC_SUCCESS, then the key.
	if !strings.HasPrefix(ek, "8001") || len(ek) < 200 || ek[12:20] != "00000000" {
		t.Fatalf("the TPM's endorsement key: %q, want a successful ReadPublic", ek)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(layout.PersistentNVRAM))); err != nil {
		t.Errorf("the EFI variable store is not in the state claim: %v", err)
	}
	if states, _ := filepath.Glob(filepath.Join(dir, "swtpm", "*", "tpm2")); len(states) != 1 {
		t.Errorf("TPM states in the state claim: %v, want one", states)
	}

	virtctl(t, f, "restart", "keeper")
	second := f.WaitNewRunningVMI("keeper", first.UID, 3*time.Minute)
	if got := guestCGI(t, f, second, "efivar"); got != value {
		t.Errorf("after the restart, EFI variable VmctlTest is %q, want %q", got, value)
	}
	if got := guestCGI(t, f, second, "tpm?ek"); got != ek {
		t.Errorf("after the restart, the TPM's endorsement key differs: the TPM was made anew")
	}

	if err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Delete(f.Context(), "keeper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually(2*time.Minute, "the state claim to go with its VM", func(ctx context.Context) (bool, error) {
		_, err := f.Kube.CoreV1().PersistentVolumeClaims(f.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
