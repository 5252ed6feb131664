package subresources

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/virtapi/subresources"
)

// putMigrate calls PUT migrate as the aggregated server's router would.
func putMigrate(t *testing.T, ns, name, body string) (int, string) {
	t.Helper()
	h := &subresources.Handler{Virt: virt, Kube: kube}
	rec := httptest.NewRecorder()
	h.ServeMigrate(rec, httptest.NewRequest(http.MethodPut, "/", strings.NewReader(body)), ns, name)
	return rec.Code, rec.Body.String()
}

func migrationsOf(t *testing.T, ns, vmi string) []v1.VirtualMachineInstanceMigration {
	t.Helper()
	list, err := virt.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=" + vmi})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestMigrateCreatesOneMigration: migrate of a VM with no running instance is 409; of a
// running one, a dry run creates nothing, then one migration is created (202, named and
// labelled as KubeVirt's, with the added node selector) and a second request is 409 while it
// is in flight.
func TestMigrateCreatesOneMigration(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := newVM(t, ns, "mover", v1.RunStrategyAlways)
	if code, body := putMigrate(t, ns, vm.Name, ""); code != http.StatusConflict || !strings.Contains(body, "is not running") {
		t.Fatalf("migrate with no instance: %d %s, want 409 not running", code, body)
	}
	vmi := newVMI(t, vm)
	vmi.Status.Phase, vmi.Status.NodeName = v1.Running, "node1"
	if _, err := virt.KubevirtV1().VirtualMachineInstances(ns).Update(context.Background(), vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	if code, body := putMigrate(t, ns, vm.Name, `{"dryRun":["All"]}`); code != http.StatusAccepted {
		t.Fatalf("dry run: %d %s, want 202", code, body)
	}
	if got := migrationsOf(t, ns, vm.Name); len(got) != 0 {
		t.Fatalf("a dry run created %d migrations", len(got))
	}
	if code, body := putMigrate(t, ns, vm.Name, `{"addedNodeSelector":{"zone":"b"}}`); code != http.StatusAccepted {
		t.Fatalf("migrate: %d %s, want 202", code, body)
	}
	got := migrationsOf(t, ns, vm.Name)
	if len(got) != 1 || !strings.HasPrefix(got[0].Name, subresources.MigrationGenerateName) ||
		got[0].Spec.VMIName != vm.Name || got[0].Spec.AddedNodeSelector["zone"] != "b" {
		t.Fatalf("migrations %+v, want one of %s with zone=b", got, vm.Name)
	}
	if code, body := putMigrate(t, ns, vm.Name, ""); code != http.StatusConflict || !strings.Contains(body, "in-flight migration") {
		t.Fatalf("second migrate: %d %s, want 409 in-flight migration", code, body)
	}
}
