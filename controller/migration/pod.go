package migration

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/vmi"
)

// RenderTargetPod is the launcher pod a migration moves the instance into: the instance's own
// launcher pod as the instance controller renders it (same images, volumes, paths: the domain
// arrives with the source's XML; block-mode claims as the instance's volume status says),
// labelled with the migration, never on a node that runs a launcher of the same instance, and
// on the nodes the migration's addedNodeSelector allows.
func RenderTargetPod(instance *v1.VirtualMachineInstance, m *v1.VirtualMachineInstanceMigration, cfg vmi.PodConfig) *corev1.Pod {
	cfg.BlockVolumes = vmi.BlockVolumesInStatus(instance)
	pod := vmi.RenderLauncherPod(instance, cfg)
	pod.Labels[v1.MigrationJobLabel] = string(m.UID)
	pod.Annotations[v1.MigrationJobNameAnnotation] = m.Name
	for k, v := range m.Spec.AddedNodeSelector {
		if _, set := pod.Spec.NodeSelector[k]; !set {
			pod.Spec.NodeSelector[k] = v
		}
	}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.PodAntiAffinity == nil {
		pod.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	anti := pod.Spec.Affinity.PodAntiAffinity
	anti.RequiredDuringSchedulingIgnoredDuringExecution = append(anti.RequiredDuringSchedulingIgnoredDuringExecution, corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{v1.CreatedByLabel: string(instance.UID)}},
		TopologyKey:   corev1.LabelHostname,
	})
	return pod
}
