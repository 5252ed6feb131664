package webhook

import (
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	virtfake "github.com/vmctl/vmctl/client/clientset/versioned/fake"
)

func TestEvictionOfALauncherPod(t *testing.T) {
	instance := func(strategy *v1.EvictionStrategy, mutate ...func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-1"}}
		vmi.Spec.EvictionStrategy = strategy
		vmi.Status.Phase, vmi.Status.NodeName = v1.Running, "node-a"
		vmi.Status.ActivePods = map[types.UID]string{"pod-1": "node-a"}
		for _, f := range mutate {
			f(vmi)
		}
		return vmi
	}
	launcher := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm-x", UID: "pod-1",
			Labels:          map[string]string{v1.AppLabel: v1.LauncherApp},
			OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachineInstance", Name: "vm", UID: "vmi-1", Controller: ptr.To(true)}}},
		Spec:   corev1.PodSpec{NodeName: "node-a"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	live, external := ptr.To(v1.EvictionStrategyLiveMigrate), ptr.To(v1.EvictionStrategyExternal)
	tests := []struct {
		name      string
		vmi       *v1.VirtualMachineInstance
		def       v1.EvictionStrategy
		dryRun    bool
		wantCode  int32 // 0: allowed
		wantEvacu string
	}{
		{"LiveMigrate: refused, marked", instance(live), "", false, http.StatusTooManyRequests, "node-a"},
		{"dry run: refused, not marked", instance(live), "", true, http.StatusTooManyRequests, ""},
		{"cluster default LiveMigrate", instance(nil), v1.EvictionStrategyLiveMigrate, false, http.StatusTooManyRequests, "node-a"},
		{"None: evicted", instance(ptr.To(v1.EvictionStrategyNone)), v1.EvictionStrategyLiveMigrate, false, 0, ""},
		{"no strategy, no default: evicted", instance(nil), "", false, 0, ""},
		{"IfPossible, not migratable: evicted", instance(ptr.To(v1.EvictionStrategyLiveMigrateIfPossible), func(vmi *v1.VirtualMachineInstance) {
			vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse}}
		}), "", false, 0, ""},
		{"IfPossible: refused", instance(ptr.To(v1.EvictionStrategyLiveMigrateIfPossible)), "", false, http.StatusTooManyRequests, "node-a"},
		{"LiveMigrate, not migratable: refused, not marked", instance(live, func(vmi *v1.VirtualMachineInstance) {
			vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse}}
		}), "", false, http.StatusTooManyRequests, ""},
		{"not its running pod: evicted", instance(live, func(vmi *v1.VirtualMachineInstance) { vmi.Status.ActivePods = nil }), "", false, 0, ""},
		{"instance not running: evicted", instance(live, func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Scheduled }), "", false, 0, ""},
		{"External: refused, marked for its owner", instance(external), "", false, http.StatusTooManyRequests, "node-a"},
		{"External while it boots: refused", instance(external, func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Scheduled }), "", false, http.StatusTooManyRequests, "node-a"},
		{"cluster default External: refused, not marked", instance(nil), v1.EvictionStrategyExternal, false, http.StatusTooManyRequests, ""},
		{"External, instance ended: evicted", instance(external, func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Succeeded }), "", false, 0, ""},
		{"External, instance being deleted: evicted", instance(external, func(vmi *v1.VirtualMachineInstance) {
			vmi.DeletionTimestamp, vmi.Finalizers = &metav1.Time{}, []string{"keep"}
		}), "", false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			virt := virtfake.NewSimpleClientset(tt.vmi)
			e := &Evictions{Kube: kubefake.NewSimpleClientset(launcher.DeepCopy()), Virt: virt, Default: tt.def}
			resp := e.review(&admissionv1.AdmissionRequest{Namespace: "ns", Name: launcher.Name, DryRun: ptr.To(tt.dryRun)})
			if tt.wantCode == 0 && !resp.Allowed || tt.wantCode != 0 && (resp.Allowed || resp.Result.Code != tt.wantCode) {
				t.Fatalf("response %+v, want code %d", resp, tt.wantCode)
			}
			got, err := virt.KubevirtV1().VirtualMachineInstances("ns").Get(t.Context(), "vm", metav1.GetOptions{})
			if err != nil || got.Status.EvacuationNodeName != tt.wantEvacu {
				t.Errorf("evacuationNodeName %q (%v), want %q", got.Status.EvacuationNodeName, err, tt.wantEvacu)
			}
		})
	}
	other := &Evictions{Kube: kubefake.NewSimpleClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}), Virt: virtfake.NewSimpleClientset()}
	if resp := other.review(&admissionv1.AdmissionRequest{Namespace: "ns", Name: "web"}); !resp.Allowed {
		t.Errorf("eviction of a pod that is no launcher: %+v", resp)
	}
}
