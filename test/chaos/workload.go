//go:build chaos

package chaos

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// The workload: every kind of thing that runs a guest, spread over the real nodes, so that
// each fault hits some of them and leaves the rest to show it did not spill over.
const (
	vmAlways  = "always"  // runStrategy Always
	vmRerun   = "rerun"   // runStrategy RerunOnFailure
	vmJournal = "journal" // Always, writing its PVC every second
	vmirs     = "replicas"
	vmirsSize = 2
	prototype = "testvm"   // examples/prototype-vm.yaml, cloned by both vmctl workloads
	vmctlApp  = "vmctl"    // examples/vmctl-deployment.yaml, 2 replicas here
	vmctlDS   = "vmctl-ds" // examples/vmctl-daemonset.yaml
	vmctlSize = 2
)

// fixedVMs are the VMs the test owns; their objects must come through every fault unchanged.
var fixedVMs = []string{vmAlways, vmRerun, vmJournal, prototype}

// preferNode asks the scheduler to put the VM's launcher pod on node if it can: the VMs
// start spread over both nodes, yet may move when their node is lost.
func preferNode(spec *v1.VirtualMachineInstanceSpec, node string) {
	if node == "" {
		return
	}
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 100,
			Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}},
		}},
	}}
}

// createWorkload creates it all in the test's namespace. first and second are the real
// nodes (second is "" on a one-node cluster); the journal VM prefers second, the node the
// node-lost fault takes away, so that fault moves the VM that writes a disk.
func createWorkload(t *testing.T, f *framework.Framework, first, second string) (journalDisk string) {
	t.Helper()
	always := framework.TestGuestVM(vmAlways, v1.RunStrategyAlways)
	preferNode(&always.Spec.Template.Spec, first)
	rerun := framework.TestGuestVM(vmRerun, v1.RunStrategyRerunOnFailure)
	preferNode(&rerun.Spec.Template.Spec, second)
	f.CreateVM(always)
	f.CreateVM(rerun)

	journalDisk = f.JournalPVC(vmJournal)
	jvm := framework.TestGuestVM(vmJournal, v1.RunStrategyAlways)
	spec := &jvm.Spec.Template.Spec
	preferNode(spec, second)
	// The only disk, on virtio (the guest kernel has no SATA driver): /dev/vda.
	spec.Domain.Firmware.KernelBoot.KernelArgs += " vmctl.journal=/dev/vda"
	spec.Domain.Devices.Disks = []v1.Disk{{Name: "data", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}}
	spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: vmJournal}}}}
	f.CreateVM(jvm)

	labels := map[string]string{"app": vmirs}
	rs := &v1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: vmirs},
		Spec: v1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To[int32](vmirsSize),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       framework.TestGuestSpec(""),
			},
		},
	}
	if _, err := f.Virt.KubevirtV1().VirtualMachineInstanceReplicaSets(f.Namespace).Create(f.Context(), rs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VMIRS: %v", err)
	}

	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	deploy := f.Example("vmctl-deployment.yaml")
	// Two replicas, not the example's three: two cores run the whole workload under TCG.
	deploy[0].(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](vmctlSize)
	f.CreateObjects(deploy...)
	f.CreateObjects(f.Example("vmctl-daemonset.yaml")...)
	return journalDisk
}
