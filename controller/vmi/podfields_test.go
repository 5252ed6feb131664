package vmi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// TestLauncherPodTakesTheInstancesPodFields: the KubeVirt fields that are the pod's own are
// copied to the launcher pod, each where a pod has it.
func TestLauncherPodTakesTheInstancesPodFields(t *testing.T) {
	memory := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
	base := func() *v1.VirtualMachineInstance {
		return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u"},
			Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: memory}}}}
	}
	probe := &v1.Probe{Handler: v1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}, PeriodSeconds: 2}
	spread := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule}
	tests := []struct {
		name  string
		edit  func(*v1.VirtualMachineInstance)
		check func(*corev1.Pod) string
	}{
		{"scheduling", func(v *v1.VirtualMachineInstance) {
			v.Spec.PriorityClassName, v.Spec.SchedulerName = "high", "custom"
			v.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{spread}
		}, func(p *corev1.Pod) string {
			return cmp.Diff([]any{"high", "custom", []corev1.TopologySpreadConstraint{spread}},
				[]any{p.Spec.PriorityClassName, p.Spec.SchedulerName, p.Spec.TopologySpreadConstraints})
		}},
		{"names and DNS", func(v *v1.VirtualMachineInstance) {
			v.Spec.Hostname, v.Spec.Subdomain = "web", "vms"
			v.Spec.DNSPolicy, v.Spec.DNSConfig = corev1.DNSNone, &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.53"}}
		}, func(p *corev1.Pod) string {
			return cmp.Diff([]any{"web", "vms", corev1.DNSNone, []string{"10.0.0.53"}},
				[]any{p.Spec.Hostname, p.Spec.Subdomain, p.Spec.DNSPolicy, p.Spec.DNSConfig.Nameservers})
		}},
		{"probes on compute", func(v *v1.VirtualMachineInstance) { v.Spec.ReadinessProbe, v.Spec.LivenessProbe = probe, probe }, func(p *corev1.Pod) string {
			c := p.Spec.Containers[0]
			want := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: probe.HTTPGet}, PeriodSeconds: 2}
			return cmp.Diff([]*corev1.Probe{want, want}, []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe})
		}},
		{"guest agent probes run virt-launcher guest-probe", func(v *v1.VirtualMachineInstance) {
			v.Spec.ReadinessProbe = &v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}, PeriodSeconds: 5}
			v.Spec.LivenessProbe = &v1.Probe{Handler: v1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}, TimeoutSeconds: 3}
		}, func(p *corev1.Pod) string {
			c := p.Spec.Containers[0]
			probe := []string{"/usr/bin/virt-launcher", "guest-probe", "--domain", "ns_web", "--timeout"}
			want := []*corev1.Probe{
				{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append(probe, "1")}}, PeriodSeconds: 5, TimeoutSeconds: 2},
				{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append(probe, "3", "--", "cat", "/tmp/healthy")}}, TimeoutSeconds: 4},
			}
			return cmp.Diff(want, []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe})
		}},
		{"hugepages", func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = &v1.Memory{Hugepages: &v1.Hugepages{PageSize: "2Mi"}}
		}, func(p *corev1.Pod) string {
			r := p.Spec.Containers[0].Resources
			got := []string{r.Requests.Name("hugepages-2Mi", resource.BinarySI).String(), r.Limits.Name("hugepages-2Mi", resource.BinarySI).String(), r.Requests.Memory().String()}
			overhead := LauncherOverhead.DeepCopy()
			overhead.Add(GraphicsOverhead)
			return cmp.Diff([]string{"128Mi", "128Mi", overhead.String()}, got)
		}},
		{"config volumes", func(v *v1.VirtualMachineInstance) {
			v.Spec.Volumes = []v1.Volume{
				{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app"}}},
				{Name: "sa", VolumeSource: v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "robot"}}},
			}
		}, func(p *corev1.Pod) string {
			names := map[string]bool{}
			for _, vol := range p.Spec.Volumes {
				names[vol.Name] = vol.ConfigMap != nil && *vol.ConfigMap.Optional || vol.Projected != nil
			}
			return cmp.Diff([]any{true, true, "robot"}, []any{names[layout.ConfigVolume("cfg")], names[layout.ConfigVolume("sa")], p.Spec.ServiceAccountName})
		}},
		{"no console log without a serial console", func(v *v1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.AutoattachSerialConsole = ptr.To(false)
		}, func(p *corev1.Pod) string {
			for _, c := range p.Spec.InitContainers {
				if c.Name == GuestConsoleLogContainer {
					return "a guest-console-log container"
				}
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := base()
			tt.edit(vmi)
			if diff := tt.check(RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})); diff != "" {
				t.Error(diff)
			}
		})
	}
}
