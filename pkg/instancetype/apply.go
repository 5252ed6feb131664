package instancetype

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Apply expands an instance type and a preference (either may be nil) into spec and meta, an
// instance's or a VirtualMachine template's, in place. path is where spec sits in the object
// (spec.template.spec for a VirtualMachine): conflicts are named under it. With conflicts
// nothing of the preference is applied, and the caller must not use spec.
func Apply(path *field.Path, it *itv1beta1.VirtualMachineInstancetypeSpec, pref *itv1beta1.VirtualMachinePreferenceSpec,
	spec *v1.VirtualMachineInstanceSpec, meta *metav1.ObjectMeta) Conflicts {
	if it != nil {
		var c Conflicts
		c = append(c, applyScheduling(path, it, spec)...)
		c = append(c, applyCPU(path.Child("domain"), it, pref, &spec.Domain)...)
		c = append(c, applyMemory(path.Child("domain"), it, &spec.Domain)...)
		c = append(c, applyDomainExtras(path.Child("domain"), it, &spec.Domain)...)
		c = append(c, applyAnnotations(it.Annotations, meta)...)
		if len(c) > 0 {
			return c
		}
	}
	ApplyPreference(pref, spec, meta)
	return nil
}

// applyScheduling: the node selector and scheduler name are the instance type's whole.
func applyScheduling(path *field.Path, it *itv1beta1.VirtualMachineInstancetypeSpec, spec *v1.VirtualMachineInstanceSpec) Conflicts {
	var c Conflicts
	if it.NodeSelector != nil {
		if spec.NodeSelector != nil {
			c = append(c, path.Child("nodeSelector"))
		} else {
			spec.NodeSelector = maps.Clone(it.NodeSelector)
		}
	}
	if it.SchedulerName != "" {
		if spec.SchedulerName != "" {
			c = append(c, path.Child("schedulerName"))
		} else {
			spec.SchedulerName = it.SchedulerName
		}
	}
	return c
}

// applyCPU: the vCPU count belongs to the instance type, so the template may not shape it
// (sockets, cores, threads, CPU requests or limits); the other CPU fields conflict only when
// both set them.
func applyCPU(path *field.Path, it *itv1beta1.VirtualMachineInstancetypeSpec, pref *itv1beta1.VirtualMachinePreferenceSpec, d *v1.DomainSpec) Conflicts {
	if d.CPU == nil {
		d.CPU = &v1.CPU{}
	}
	cpu, want := d.CPU, it.CPU
	var c Conflicts
	if _, ok := d.Resources.Requests[corev1.ResourceCPU]; ok {
		c = append(c, path.Child("resources", "requests", "cpu"))
	}
	if _, ok := d.Resources.Limits[corev1.ResourceCPU]; ok {
		c = append(c, path.Child("resources", "limits", "cpu"))
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"sockets", cpu.Sockets != 0}, {"cores", cpu.Cores != 0}, {"threads", cpu.Threads != 0},
		{"model", cpu.Model != "" && want.Model != nil},
		{"dedicatedCpuPlacement", cpu.DedicatedCPUPlacement && want.DedicatedCPUPlacement != nil},
		{"isolateEmulatorThread", cpu.IsolateEmulatorThread && want.IsolateEmulatorThread != nil},
		{"numa", cpu.NUMA != nil && want.NUMA != nil},
		{"realtime", cpu.Realtime != nil && want.Realtime != nil},
	} {
		if f.set {
			c = append(c, path.Child("cpu", f.name))
		}
	}
	if len(c) > 0 {
		return c
	}
	if want.Model != nil {
		cpu.Model = *want.Model
	}
	if want.DedicatedCPUPlacement != nil {
		cpu.DedicatedCPUPlacement = *want.DedicatedCPUPlacement
	}
	if want.IsolateEmulatorThread != nil {
		cpu.IsolateEmulatorThread = *want.IsolateEmulatorThread
	}
	if want.NUMA != nil {
		cpu.NUMA = want.NUMA.DeepCopy()
	}
	if want.Realtime != nil {
		cpu.Realtime = want.Realtime.DeepCopy()
	}
	if want.MaxSockets != nil {
		cpu.MaxSockets = *want.MaxSockets
	}
	cpu.Sockets, cpu.Cores, cpu.Threads = Topology(want.Guest, pref)
	return nil
}

// applyMemory: the guest memory belongs to the instance type, so the template may set
// neither it nor a memory request or limit. overcommitPercent lowers the request below it.
func applyMemory(path *field.Path, it *itv1beta1.VirtualMachineInstancetypeSpec, d *v1.DomainSpec) Conflicts {
	if d.Memory == nil {
		d.Memory = &v1.Memory{}
	}
	m, want := d.Memory, it.Memory
	var c Conflicts
	if m.Guest != nil {
		c = append(c, path.Child("memory", "guest"))
	}
	if m.Hugepages != nil && want.Hugepages != nil {
		c = append(c, path.Child("memory", "hugepages"))
	}
	if m.MaxGuest != nil && want.MaxGuest != nil {
		c = append(c, path.Child("memory", "maxGuest"))
	}
	if _, ok := d.Resources.Requests[corev1.ResourceMemory]; ok {
		c = append(c, path.Child("resources", "requests", "memory"))
	}
	if _, ok := d.Resources.Limits[corev1.ResourceMemory]; ok {
		c = append(c, path.Child("resources", "limits", "memory"))
	}
	if len(c) > 0 {
		return c
	}
	guest := want.Guest.DeepCopy()
	m.Guest = &guest
	if pct := want.OvercommitPercent; pct > 0 {
		if d.Resources.Requests == nil {
			d.Resources.Requests = corev1.ResourceList{}
		}
		// Integer arithmetic (split so it cannot overflow): a float rounds large sizes.
		v, keep := guest.Value(), int64(100-pct)
		request := v/100*keep + v%100*keep/100
		d.Resources.Requests[corev1.ResourceMemory] = *resource.NewQuantity(request, guest.Format)
	}
	if want.Hugepages != nil {
		m.Hugepages = want.Hugepages.DeepCopy()
	}
	if want.MaxGuest != nil {
		q := want.MaxGuest.DeepCopy()
		m.MaxGuest = &q
	}
	return nil
}

// applyDomainExtras: I/O threads, launch security and passed-through devices conflict when
// both the instance type and the template set them.
func applyDomainExtras(path *field.Path, it *itv1beta1.VirtualMachineInstancetypeSpec, d *v1.DomainSpec) Conflicts {
	var c Conflicts
	set := func(name string, both bool, apply func()) {
		if both {
			c = append(c, path.Child(name))
		} else {
			apply()
		}
	}
	if it.IOThreadsPolicy != nil {
		set("ioThreadsPolicy", d.IOThreadsPolicy != nil, func() { p := *it.IOThreadsPolicy; d.IOThreadsPolicy = &p })
	}
	if it.IOThreads != nil {
		set("ioThreads", d.IOThreads != nil, func() { d.IOThreads = it.IOThreads.DeepCopy() })
	}
	if it.LaunchSecurity != nil {
		set("launchSecurity", d.LaunchSecurity != nil, func() { d.LaunchSecurity = it.LaunchSecurity.DeepCopy() })
	}
	if len(it.GPUs) > 0 {
		c = append(c, appendDevices(path.Child("devices", "gpus"), &d.Devices.GPUs, it.GPUs)...)
	}
	if len(it.HostDevices) > 0 {
		c = append(c, appendDevices(path.Child("devices", "hostDevices"), &d.Devices.HostDevices, it.HostDevices)...)
	}
	return c
}

func appendDevices[T any](path *field.Path, dst *[]T, src []T) Conflicts {
	if len(*dst) > 0 {
		return Conflicts{path}
	}
	*dst = append([]T(nil), src...)
	return nil
}

// applyAnnotations: the instance type's annotations are added; the template may repeat one
// with the same value but not give it another.
func applyAnnotations(want map[string]string, meta *metav1.ObjectMeta) Conflicts {
	var c Conflicts
	for k, v := range want {
		if have, ok := meta.Annotations[k]; ok {
			if have != v {
				c = append(c, field.NewPath("spec", "template", "metadata", "annotations").Key(k))
			}
			continue
		}
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[k] = v
	}
	return c
}
