//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestAMissingCloudInitSecretIsReported: a VM whose cloud-init user data names a Secret that
// does not exist gets an instance that fails saying which Secret is missing, instead of a
// launcher pod stuck in ContainerCreating; once the Secret is created, the VM's next instance
// runs.
func TestAMissingCloudInitSecretIsReported(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("seeded", v1.RunStrategyAlways)
	spec := &vm.Spec.Template.Spec
	spec.Domain.Devices.Disks = []v1.Disk{{Name: "cloudinit"}}
	spec.Volumes = []v1.Volume{{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
		UserDataSecretRef: &corev1.LocalObjectReference{Name: "seed"}}}}}
	f.CreateVM(vm)
	failed := f.WaitVMIPhase("seeded", v1.Failed, 3*time.Minute)
	if failed.Status.Reason != "MissingSecret" || !slices.ContainsFunc(failed.Status.Conditions, func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Type == v1.VirtualMachineInstanceSynchronized && strings.Contains(c.Message, `secret "seed": not found`)
	}) {
		t.Errorf("failed instance: reason %q, conditions %+v; want MissingSecret naming the secret", failed.Status.Reason, failed.Status.Conditions)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "seed"}, StringData: map[string]string{"userdata": "#cloud-config\n"}}
	if _, err := f.Kube.CoreV1().Secrets(f.Namespace).Create(f.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitNewRunningVMI("seeded", failed.UID, 4*time.Minute)
}
