package subresources

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// MigrateOptions is the body of PUT migrate (KubeVirt's MigrateOptions); every field is
// optional.
type MigrateOptions struct {
	// DryRun ["All"] checks the request and answers as if done, creating nothing.
	DryRun []string `json:"dryRun,omitempty"`
	// AddedNodeSelector narrows the nodes the instance may move to.
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty"`
}

// MigrationGenerateName prefixes the name of the migrations virtctl migrate asks for, as
// KubeVirt names them.
const MigrationGenerateName = "kubevirt-migrate-vm-"

// ServeMigrate handles PUT migrate of the VirtualMachine namespace/name: 409 with the reason
// when its instance cannot migrate now (MigrationRefusal), else a VirtualMachineInstanceMigration
// of the instance is created (the migration controller carries it out) and the answer is 202.
func (h *Handler) ServeMigrate(w http.ResponseWriter, r *http.Request, namespace, name string) {
	var opts MigrateOptions
	if err := readPut(r, vmResource, &opts); err != nil {
		writeStatus(w, err)
		return
	}
	if err := h.migrate(r.Context(), namespace, name, opts); err != nil {
		writeStatus(w, err)
		return
	}
	klog.V(2).InfoS("accepted", "verb", "migrate", "vm", klog.KRef(namespace, name))
	writeAccepted(w)
}

func (h *Handler) migrate(ctx context.Context, namespace, name string, opts MigrateOptions) error {
	vm, err := h.Virt.KubevirtV1().VirtualMachines(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	vmi, err := h.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(vmi, vm)) {
		return apierrors.NewConflict(vmResource, name, fmt.Errorf("VM %s is not running", name))
	}
	if err != nil {
		return err
	}
	migrations, err := h.Virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).List(ctx,
		metav1.ListOptions{LabelSelector: v1.MigrationSelectorLabel + "=" + name})
	if err != nil {
		return err
	}
	if refusal := MigrationRefusal(vmi, migrations.Items); refusal != "" {
		return apierrors.NewConflict(vmResource, name, fmt.Errorf("%s", refusal))
	}
	m := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: MigrationGenerateName, Labels: map[string]string{v1.MigrationSelectorLabel: name}},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: name, AddedNodeSelector: opts.AddedNodeSelector},
	}
	_, err = h.Virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Create(ctx, m, metav1.CreateOptions{DryRun: opts.DryRun})
	return err
}

// MigrationRefusal says why an instance cannot start a migration now, given its migrations;
// empty when it can.
func MigrationRefusal(vmi *v1.VirtualMachineInstance, migrations []v1.VirtualMachineInstanceMigration) string {
	if vmi.DeletionTimestamp != nil || vmi.Status.Phase != v1.Running {
		return fmt.Sprintf("VM %s is not running", vmi.Name)
	}
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c != nil && c.Status == corev1.ConditionFalse {
		return fmt.Sprintf("cannot migrate VMI %s: %s: %s", vmi.Name, c.Reason, c.Message)
	}
	if s := vmi.Status.MigrationState; s != nil && !s.Completed {
		return fmt.Sprintf("VMI %s is already migrating (migration %s)", vmi.Name, s.MigrationUID)
	}
	for _, m := range migrations {
		if m.Spec.VMIName == vmi.Name && !m.Status.Phase.IsFinal() && m.DeletionTimestamp == nil {
			return fmt.Sprintf("in-flight migration detected: %s of VMI %s is in progress", m.Name, vmi.Name)
		}
	}
	return ""
}
