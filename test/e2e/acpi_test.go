//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestACPITablesFromASecret: spec.domain.firmware.acpi (KubeVirt's slicNameRef and
// msdmNameRef) gives the guest the SLIC and MSDM tables a secret holds, as a Windows guest
// reads its license from them; the guest finds both among its ACPI tables.
func TestACPITablesFromASecret(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "license"}, Data: map[string][]byte{
		"slic.bin": acpiTable("SLIC", "a SLIC table's body"),
		"msdm.bin": acpiTable("MSDM", "an MSDM table's body, a product key"),
	}})
	spec := framework.TestGuestSpec("licensed")
	spec.Domain.Firmware.ACPI = &v1.ACPI{SlicNameRef: "tables", MsdmNameRef: "tables"}
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "tables", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "license"}}})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "licensed"}, Spec: spec})
	vmi := f.WaitVMIPhase("licensed", v1.Running, bootTimeout)

	tables := guestCGI(t, f, vmi, "acpi")
	for _, want := range []string{
		fmt.Sprintf("SLIC size=%d oem=VMCTL", len(acpiTable("SLIC", "a SLIC table's body"))),
		fmt.Sprintf("MSDM size=%d oem=VMCTL", len(acpiTable("MSDM", "an MSDM table's body, a product key"))),
	} {
		if lineWith(tables, want) == "" {
			t.Errorf("the guest's ACPI tables have no %q:\n%s", want, tables)
		}
	}
}

// acpiTable is a table of that signature: the 36-byte header (length, revision, checksum,
// OEM ID VMCTL), then body.
func acpiTable(signature, body string) []byte {
	t := make([]byte, 36+len(body))
	copy(t, signature)
	binary.LittleEndian.PutUint32(t[4:], uint32(len(t)))
	t[8] = 1
	copy(t[10:], "VMCTL TESTTABL")
	copy(t[36:], body)
	var sum byte
	for _, b := range t {
		sum += b
	}
	t[9] = -sum // the bytes of a table sum to zero
	return t
}
