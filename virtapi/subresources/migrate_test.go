package subresources

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestMigrationRefusal(t *testing.T) {
	vmi := func(phase v1.VirtualMachineInstancePhase, mutate ...func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
		i := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm"}}
		i.Status.Phase = phase
		for _, f := range mutate {
			f(i)
		}
		return i
	}
	migration := func(vmiName string, phase v1.VirtualMachineInstanceMigrationPhase) v1.VirtualMachineInstanceMigration {
		m := v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmiName}}
		m.Status.Phase = phase
		return m
	}
	tests := []struct {
		name       string
		vmi        *v1.VirtualMachineInstance
		migrations []v1.VirtualMachineInstanceMigration
		want       string
	}{
		{"running", vmi(v1.Running), nil, ""},
		{"scheduled", vmi(v1.Scheduled), nil, "not running"},
		{"being deleted", vmi(v1.Running, func(i *v1.VirtualMachineInstance) { i.DeletionTimestamp = &metav1.Time{} }), nil, "not running"},
		{"not migratable", vmi(v1.Running, func(i *v1.VirtualMachineInstance) {
			i.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable,
				Status: corev1.ConditionFalse, Reason: "DisksNotLiveMigratable", Message: "PVC disk is not shared"}}
		}), nil, "DisksNotLiveMigratable: PVC disk is not shared"},
		{"migrating", vmi(v1.Running, func(i *v1.VirtualMachineInstance) {
			i.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "u1"}
		}), nil, "already migrating"},
		{"last migration over", vmi(v1.Running, func(i *v1.VirtualMachineInstance) {
			i.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "u1", Completed: true}
		}), []v1.VirtualMachineInstanceMigration{migration("vm", v1.MigrationSucceeded)}, ""},
		{"one in flight", vmi(v1.Running), []v1.VirtualMachineInstanceMigration{migration("vm", v1.MigrationPending)}, "in-flight migration"},
		{"another instance's", vmi(v1.Running), []v1.VirtualMachineInstanceMigration{migration("other", v1.MigrationPending)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MigrationRefusal(tt.vmi, tt.migrations)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("MigrationRefusal = %q, want %q", got, tt.want)
			}
		})
	}
}
