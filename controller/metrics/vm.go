package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

var vmInfoDesc = prometheus.NewDesc("kubevirt_vm_info", "Information about Virtual Machines.",
	[]string{"name", "namespace", "os", "workload", "flavor", "instance_type", "preference", "status", "status_group"}, nil)

// statusGroup is one of KubeVirt's groups of printable statuses, with the counter its alerts
// read the time a VM entered the group from (KubeVirtVMStuckInStartingState, ...ErrorState).
type statusGroup struct {
	name     string
	statuses []v1.VirtualMachinePrintableStatus
	desc     *prometheus.Desc
}

func timestampDesc(group, what string) *prometheus.Desc {
	return prometheus.NewDesc("kubevirt_vm_"+group+"_status_last_transition_timestamp_seconds",
		"Virtual Machine last transition timestamp to "+what+" status.", []string{"name", "namespace"}, nil)
}

// statusGroups are KubeVirt's, in its order; errorGroup also takes statuses no group lists.
var (
	statusGroups = []statusGroup{
		{"starting", []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusProvisioning, v1.VirtualMachineStatusStarting,
			v1.VirtualMachineStatusWaitingForVolumes}, timestampDesc("starting", "starting")},
		{"running", []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusRunning}, timestampDesc("running", "running")},
		{"migrating", []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusMigrating}, timestampDesc("migrating", "migrating")},
		{"non_running", []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusStopped, v1.VirtualMachineStatusPaused,
			v1.VirtualMachineStatusStopping, v1.VirtualMachineStatusTerminating}, timestampDesc("non_running", "paused/stopped")},
		{"error", []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusCrashLoopBackOff, v1.VirtualMachineStatusUnknown,
			v1.VirtualMachineStatusUnschedulable, v1.VirtualMachineStatusErrImagePull, v1.VirtualMachineStatusImagePullBackOff,
			v1.VirtualMachineStatusPvcNotFound}, timestampDesc("error", "error")},
	}
	errorGroup = len(statusGroups) - 1
)

// groupOf is the index of the status's group in statusGroups, -1 when none lists it.
func groupOf(status v1.VirtualMachinePrintableStatus) int {
	for i, g := range statusGroups {
		if slices.Contains(g.statuses, status) {
			return i
		}
	}
	return -1
}

// collectVMs sends one kubevirt_vm_info per VM, and per VM each group's timestamp counter:
// the time of the VM's latest Ready, Failure or Paused transition on its current group's, 0
// on the others (and on the current one while no such condition says when).
func (c *Collector) collectVMs(ch chan<- prometheus.Metric, vms []*v1.VirtualMachine) {
	for _, vm := range vms {
		status := vm.Status.PrintableStatus
		group := groupOf(status)
		groupName := "<unknown>"
		if group >= 0 {
			groupName = statusGroups[group].name
		} else {
			group = errorGroup
		}
		var tmpl map[string]string
		if vm.Spec.Template != nil {
			tmpl = vm.Spec.Template.ObjectMeta.Annotations
		}
		it, pref := none, none
		if m := vm.Spec.Instancetype; m != nil {
			it = c.typeName(v1.InstancetypeKindOf(m.Kind), vm.Namespace, m.Name)
		}
		if m := vm.Spec.Preference; m != nil {
			pref = c.typeName(v1.PreferenceKindOf(m.Kind), vm.Namespace, m.Name)
		}
		ch <- prometheus.MustNewConstMetric(vmInfoDesc, prometheus.GaugeValue, 1, vm.Name, vm.Namespace,
			annotationOr(tmpl, osAnnotation), annotationOr(tmpl, workloadAnnotation), annotationOr(tmpl, flavorAnnotation),
			it, pref, string(status), groupName)
		last := lastTransition(vm)
		for i, g := range statusGroups {
			value := 0.0
			if i == group {
				value = last
			}
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.CounterValue, value, vm.Name, vm.Namespace)
		}
	}
}

// lastTransition is the Unix time of the VM's latest Ready, Failure or Paused condition
// change, 0 when it has none.
func lastTransition(vm *v1.VirtualMachine) float64 {
	var last int64
	for _, cond := range vm.Status.Conditions {
		switch cond.Type {
		case v1.VirtualMachineReady, v1.VirtualMachineFailure, v1.VirtualMachinePaused:
			if t := cond.LastTransitionTime.Unix(); !cond.LastTransitionTime.IsZero() && t > last {
				last = t
			}
		}
	}
	return float64(last)
}
