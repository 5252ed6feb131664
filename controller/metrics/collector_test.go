package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
)

func vmi(name, node string, phase v1.VirtualMachineInstancePhase, annotations map[string]string) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: annotations},
		Status:     v1.VirtualMachineInstanceStatus{Phase: phase, NodeName: node},
	}
}

func vm(name string, status v1.VirtualMachinePrintableStatus, conds ...v1.VirtualMachineCondition) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.VirtualMachineSpec{Template: &v1.VirtualMachineInstanceTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{osAnnotation: "fedora"}},
		}},
		Status: v1.VirtualMachineStatus{PrintableStatus: status, Conditions: conds},
	}
}

func collector(t *testing.T, synced bool, objs ...any) *Collector {
	t.Helper()
	vmis := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	vms := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		store := vmis
		if _, ok := o.(*v1.VirtualMachine); ok {
			store = vms
		}
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return &Collector{
		VMIs:    listers.NewVirtualMachineInstanceLister(vmis),
		VMs:     listers.NewVirtualMachineLister(vms),
		Synced:  func() bool { return synced },
		Leading: func() bool { return synced },
		Ready:   func() error { return nil },
		Types:   fakeTypes{},
	}
}

// fakeTypes holds a cluster instance type and preference of shown vendors, and a user's own
// instance type; anything else is not found.
type fakeTypes struct{}

func meta(name, vendor string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{vendorLabel: vendor}}
}

var errNotFound = errors.New("not found")

func (fakeTypes) Instancetype(ns, name string) (*itv1beta1.VirtualMachineInstancetype, error) {
	if ns == "ns" && name == "mine" {
		return &itv1beta1.VirtualMachineInstancetype{ObjectMeta: meta(name, "example.com")}, nil
	}
	return nil, errNotFound
}

func (fakeTypes) ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error) {
	if name == "u1.small" {
		return &itv1beta1.VirtualMachineClusterInstancetype{ObjectMeta: meta(name, "kubevirt.io")}, nil
	}
	return nil, errNotFound
}

func (fakeTypes) Preference(string, string) (*itv1beta1.VirtualMachinePreference, error) {
	return nil, errNotFound
}

func (fakeTypes) ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error) {
	if name == "fedora" {
		return &itv1beta1.VirtualMachineClusterPreference{ObjectMeta: meta(name, "redhat.com")}, nil
	}
	return nil, errNotFound
}

const phaseHelp = "# HELP kubevirt_vmi_phase_count Sum of VMIs per phase and node. `phase` can be one of the following: [`Pending`, `Scheduling`, `Scheduled`, `Running`, `Succeeded`, `Failed`, `Unknown`].\n# TYPE kubevirt_vmi_phase_count gauge\n"

func TestPhaseCount(t *testing.T) {
	tests := []struct {
		name   string
		synced bool
		vmis   []any
		want   string
	}{
		{"caches not synced: nothing", false, []any{vmi("a", "n1", v1.Running, nil)}, ""},
		{"no instances: nothing", true, nil, ""},
		{"by node and lower-case phase", true, []any{
			vmi("a", "n1", v1.Running, nil), vmi("b", "n1", v1.Running, nil),
			vmi("c", "n2", v1.Running, nil), vmi("d", "", v1.Pending, nil), vmi("e", "", "", nil),
		}, `
kubevirt_vmi_phase_count{flavor="<none>",instance_type="<none>",node="",os="<none>",phase="",preference="<none>",workload="<none>"} 1
kubevirt_vmi_phase_count{flavor="<none>",instance_type="<none>",node="",os="<none>",phase="pending",preference="<none>",workload="<none>"} 1
kubevirt_vmi_phase_count{flavor="<none>",instance_type="<none>",node="n1",os="<none>",phase="running",preference="<none>",workload="<none>"} 2
kubevirt_vmi_phase_count{flavor="<none>",instance_type="<none>",node="n2",os="<none>",phase="running",preference="<none>",workload="<none>"} 1
`},
		{"template annotations and instance types", true, []any{
			vmi("a", "n1", v1.Scheduled, map[string]string{osAnnotation: "rhel9", workloadAnnotation: "server", flavorAnnotation: "small",
				clusterInstancetypeAnnotation: "u1.small", clusterPreferenceAnnotation: "fedora"}),
			vmi("b", "n1", v1.Scheduled, map[string]string{instancetypeAnnotation: "mine", preferenceAnnotation: "gone"}),
		}, `
kubevirt_vmi_phase_count{flavor="<none>",instance_type="<other>",node="n1",os="<none>",phase="scheduled",preference="<other>",workload="<none>"} 1
kubevirt_vmi_phase_count{flavor="small",instance_type="u1.small",node="n1",os="rhel9",phase="scheduled",preference="fedora",workload="server"} 1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := ""
			if tt.want != "" {
				want = phaseHelp + strings.TrimPrefix(tt.want, "\n")
			}
			if err := testutil.CollectAndCompare(collector(t, tt.synced, tt.vmis...), strings.NewReader(want), "kubevirt_vmi_phase_count"); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTypeName(t *testing.T) {
	tests := []struct {
		name                 string
		types                bool
		kind, namespace, obj string
		want                 string
	}{
		{"a shown vendor's", true, v1.ClusterInstancetypeKind, "", "u1.small", "u1.small"},
		{"a user's own", true, v1.InstancetypeKind, "ns", "mine", other},
		{"not found", true, v1.PreferenceKind, "ns", "gone", other},
		{"no way to read them", false, v1.ClusterInstancetypeKind, "", "u1.small", other},
		{"an unknown kind", true, "", "", "u1.small", none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Collector{}
			if tt.types {
				c.Types = fakeTypes{}
			}
			if got := c.typeName(tt.kind, tt.namespace, tt.obj); got != tt.want {
				t.Errorf("typeName(%q, %q, %q) = %q, want %q", tt.kind, tt.namespace, tt.obj, got, tt.want)
			}
		})
	}
}

// withTypes gives the VM a cluster instance type of a shown vendor and a user's preference.
func withTypes(vm *v1.VirtualMachine) *v1.VirtualMachine {
	vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "u1.small"}
	vm.Spec.Preference = &v1.PreferenceMatcher{Name: "mine", Kind: "virtualmachinepreference"}
	return vm
}

func TestVMMetrics(t *testing.T) {
	at := func(sec int64) metav1.Time { return metav1.NewTime(time.Unix(sec, 0)) }
	ready := v1.VirtualMachineCondition{Type: v1.VirtualMachineReady, Status: corev1.ConditionTrue, LastTransitionTime: at(1000)}
	failure := v1.VirtualMachineCondition{Type: v1.VirtualMachineFailure, Status: corev1.ConditionTrue, LastTransitionTime: at(2000)}
	tests := []struct {
		name string
		vm   *v1.VirtualMachine
		info string // status, status_group
		// each group's timestamp, in statusGroups' order
		stamps [5]string
	}{
		{"running", vm("r", v1.VirtualMachineStatusRunning, ready), `status="Running",status_group="running"`, [5]string{"0", "1000", "0", "0", "0"}},
		{"latest condition wins", vm("c", v1.VirtualMachineStatusCrashLoopBackOff, ready, failure), `status="CrashLoopBackOff",status_group="error"`, [5]string{"0", "0", "0", "0", "2000"}},
		{"stopped without conditions", vm("s", v1.VirtualMachineStatusStopped), `status="Stopped",status_group="non_running"`, [5]string{"0", "0", "0", "0", "0"}},
		{"starting", vm("p", v1.VirtualMachineStatusProvisioning, ready), `status="Provisioning",status_group="starting"`, [5]string{"1000", "0", "0", "0", "0"}},
		{"status not known yet counts as error", vm("u", "", ready), `status="",status_group="<unknown>"`, [5]string{"0", "0", "0", "0", "1000"}},
		{"instance type and preference", withTypes(vm("t", v1.VirtualMachineStatusStopped)), `status="Stopped",status_group="non_running"`, [5]string{"0", "0", "0", "0", "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("# HELP kubevirt_vm_info Information about Virtual Machines.\n# TYPE kubevirt_vm_info gauge\n")
			it, pref := "<none>", "<none>"
			if tt.vm.Spec.Instancetype != nil {
				it, pref = "u1.small", "<other>"
			}
			b.WriteString(`kubevirt_vm_info{flavor="<none>",instance_type="` + it + `",name="` + tt.vm.Name + `",namespace="ns",os="fedora",preference="` + pref + `",` + tt.info + `,workload="<none>"} 1` + "\n")
			names := []string{"kubevirt_vm_info"}
			for i, g := range statusGroups {
				name := "kubevirt_vm_" + g.name + "_status_last_transition_timestamp_seconds"
				names = append(names, name)
				help := map[string]string{"non_running": "paused/stopped"}[g.name]
				if help == "" {
					help = g.name
				}
				b.WriteString("# HELP " + name + " Virtual Machine last transition timestamp to " + help + " status.\n# TYPE " + name + " counter\n")
				b.WriteString(name + `{name="` + tt.vm.Name + `",namespace="ns"} ` + tt.stamps[i] + "\n")
			}
			if err := testutil.CollectAndCompare(collector(t, true, tt.vm), strings.NewReader(b.String()), names...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestControllerStatus(t *testing.T) {
	tests := []struct {
		name            string
		leading         bool
		ready           error
		leader, isReady string
	}{
		{"standby, ready to lead", false, nil, "0", "1"},
		{"leading, caches syncing", true, errors.New("caches not synced yet"), "1", "0"},
		{"leading and ready", true, nil, "1", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := collector(t, false)
			c.Leading = func() bool { return tt.leading }
			c.Ready = func() error { return tt.ready }
			want := `
# HELP kubevirt_virt_controller_leading_status Indication for an operating virt-controller.
# TYPE kubevirt_virt_controller_leading_status gauge
kubevirt_virt_controller_leading_status ` + tt.leader + `
# HELP kubevirt_virt_controller_ready_status Indication for a virt-controller that is ready to take the lead.
# TYPE kubevirt_virt_controller_ready_status gauge
kubevirt_virt_controller_ready_status ` + tt.isReady + "\n"
			if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}
