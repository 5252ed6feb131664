package validation

import (
	"slices"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func memory(requests, limits string) v1.DomainSpec {
	var d v1.DomainSpec
	if requests != "" {
		d.Resources.Requests = k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse(requests)}
	}
	if limits != "" {
		d.Resources.Limits = k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse(limits)}
	}
	return d
}

func template(domain v1.DomainSpec, volumes ...v1.Volume) *v1.VirtualMachineInstanceTemplateSpec {
	return &v1.VirtualMachineInstanceTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec:       v1.VirtualMachineInstanceSpec{Domain: domain, Volumes: volumes},
	}
}

// fields lists the paths of the errors, which is what a user reads first.
func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// sysprep is a sysprep volume from the ConfigMap configMap ("" for none) and the Secret secret.
func sysprep(configMap string, secret *k8sv1.LocalObjectReference) v1.Volume {
	src := &v1.SysprepSource{Secret: secret}
	if configMap != "" {
		src.ConfigMap = &k8sv1.LocalObjectReference{Name: configMap}
	}
	return v1.Volume{Name: "sysprep" + configMap, VolumeSource: v1.VolumeSource{Sysprep: src}}
}

func TestValidateVirtualMachineSpec(t *testing.T) {
	containerDisk := v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "img"}}}
	tests := []struct {
		name string
		spec v1.VirtualMachineSpec
		want []string
	}{
		{name: "valid", spec: v1.VirtualMachineSpec{Running: ptr.To(true), Template: template(memory("64M", ""), containerDisk)}},
		{name: "running and runStrategy", want: []string{"spec.running"},
			spec: v1.VirtualMachineSpec{Running: ptr.To(true), RunStrategy: ptr.To(v1.RunStrategyAlways), Template: template(memory("64M", ""))}},
		{name: "unknown runStrategy", want: []string{"spec.runStrategy"},
			spec: v1.VirtualMachineSpec{RunStrategy: ptr.To(v1.VirtualMachineRunStrategy("Sometimes")), Template: template(memory("64M", ""))}},
		{name: "no template", want: []string{"spec.template"}, spec: v1.VirtualMachineSpec{}},
		{name: "no memory", want: []string{"spec.template.spec.domain.resources.requests.memory"},
			spec: v1.VirtualMachineSpec{Template: template(v1.DomainSpec{})}},
		{name: "zero memory request", want: []string{"spec.template.spec.domain.resources.requests.memory"},
			spec: v1.VirtualMachineSpec{Template: template(memory("0", ""))}},
		{name: "request above limit", want: []string{"spec.template.spec.domain.resources.requests.memory"},
			spec: v1.VirtualMachineSpec{Template: template(memory("128Mi", "64Mi"))}},
		{name: "guest memory alone is enough",
			spec: v1.VirtualMachineSpec{Template: template(v1.DomainSpec{Memory: &v1.Memory{Guest: ptr.To(resource.MustParse("64Mi"))}})}},
		{name: "duplicate volume and volume without source",
			want: []string{"spec.template.spec.volumes[1].name", "spec.template.spec.volumes[2]"},
			spec: v1.VirtualMachineSpec{Template: template(memory("64M", ""), containerDisk, containerDisk, v1.Volume{Name: "empty"})}},
		{name: "sysprep from a configMap",
			spec: v1.VirtualMachineSpec{Template: template(memory("64M", ""), sysprep("answers", nil))}},
		{name: "sysprep from both or neither", want: []string{"spec.template.spec.volumes[0].sysprep", "spec.template.spec.volumes[1].sysprep"},
			spec: v1.VirtualMachineSpec{Template: template(memory("64M", ""), sysprep("answers", &k8sv1.LocalObjectReference{Name: "s"}), sysprep("", nil))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateVirtualMachineSpec(field.NewPath("spec"), &tt.spec)
			if got := fields(errs); !slices.Equal(got, tt.want) {
				t.Errorf("error fields = %v, want %v (%v)", got, tt.want, errs)
			}
		})
	}
}

func TestValidateReplicaSetSpec(t *testing.T) {
	selector := func(labels map[string]string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: labels}
	}
	tests := []struct {
		name string
		spec v1.VirtualMachineInstanceReplicaSetSpec
		want []string
	}{
		{name: "valid", spec: v1.VirtualMachineInstanceReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: selector(map[string]string{"app": "a"}), Template: template(memory("64M", ""))}},
		{name: "negative replicas", want: []string{"spec.replicas"},
			spec: v1.VirtualMachineInstanceReplicaSetSpec{Replicas: ptr.To[int32](-1), Selector: selector(map[string]string{"app": "a"}), Template: template(memory("64M", ""))}},
		{name: "selector does not match template", want: []string{"spec.selector"},
			spec: v1.VirtualMachineInstanceReplicaSetSpec{Selector: selector(map[string]string{"app": "b"}), Template: template(memory("64M", ""))}},
		{name: "empty selector", want: []string{"spec.selector"},
			spec: v1.VirtualMachineInstanceReplicaSetSpec{Selector: selector(nil), Template: template(memory("64M", ""))}},
		{name: "no selector", want: []string{"spec.selector"},
			spec: v1.VirtualMachineInstanceReplicaSetSpec{Template: template(memory("64M", ""))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateReplicaSetSpec(field.NewPath("spec"), &tt.spec)
			if got := fields(errs); !slices.Equal(got, tt.want) {
				t.Errorf("error fields = %v, want %v (%v)", got, tt.want, errs)
			}
		})
	}
}
