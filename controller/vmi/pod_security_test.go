package vmi

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Every launcher pod must be admitted by a namespace that enforces Pod Security "restricted",
// whatever volumes its guest uses: the check is the admission plugin's own evaluator.
func TestLauncherPodPassesPodSecurityRestricted(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	nic := v1.Devices{Interfaces: []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}}}
	kernelBoot := &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "guest:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}}}
	volumes := []struct {
		kind string
		src  v1.VolumeSource
	}{
		{"containerDisk", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1", ImagePullSecret: "creds"}}},
		{"cloudInitNoCloud", v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n",
			NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "net"}}}},
		{"cloudInitNoCloud secret", v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserDataSecretRef: &corev1.LocalObjectReference{Name: "user"}}}},
		{"emptyDisk", v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}},
		{"persistentVolumeClaim", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
	}
	var all []v1.Volume
	for i, v := range volumes {
		all = append(all, v1.Volume{Name: fmt.Sprintf("disk%d", i), VolumeSource: v.src})
	}
	type podCase struct {
		name    string
		spec    v1.VirtualMachineInstanceSpec
		podConf PodConfig
	}
	tests := []podCase{
		{"no volumes, no NIC", v1.VirtualMachineInstanceSpec{}, PodConfig{}},
		{"every volume kind, kernel boot, pod NIC, KVM", v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Devices: nic, Firmware: kernelBoot}, Volumes: all}, PodConfig{}},
		{"every volume kind, emulation", v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: nic}, Volumes: all}, PodConfig{UseEmulation: true}},
	}
	for _, v := range volumes {
		tests = append(tests, podCase{v.kind, v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: nic}, Volumes: []v1.Volume{{Name: "disk", VolumeSource: v.src}}}, PodConfig{UseEmulation: true}})
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.podConf.LauncherImage = "launcher:1"
			vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "tenant", UID: "uid-1"}, Spec: tt.spec}
			pod := RenderLauncherPod(vmi, tt.podConf)
			result := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &pod.ObjectMeta, &pod.Spec))
			if !result.Allowed {
				t.Errorf("violates PodSecurity restricted: %s", result.ForbiddenDetail())
			}
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
				if sc := c.SecurityContext; sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 {
					t.Errorf("container %s adds capabilities: %+v", c.Name, sc)
				}
			}
			if psc := pod.Spec.SecurityContext; *psc.RunAsUser != 107 || *psc.RunAsGroup != 107 || !*psc.RunAsNonRoot {
				t.Errorf("pod security context %+v, want uid/gid 107, non-root", psc)
			}
			if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
				t.Error("the launcher pod mounts a service account token")
			}
		})
	}
}

// The evaluator does refuse what the launcher pod used to be: root with capabilities.
func TestPodSecurityEvaluatorRefusesARootLauncher(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := RenderLauncherPod(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "tenant"}}, PodConfig{LauncherImage: "launcher:1"})
	pod.Spec.SecurityContext.RunAsUser = new(int64)
	pod.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
	baseline := psaapi.LevelVersion{Level: psaapi.LevelBaseline, Version: psaapi.LatestVersion()}
	if result := policy.AggregateCheckResults(evaluator.EvaluatePod(baseline, &pod.ObjectMeta, &pod.Spec)); result.Allowed {
		t.Error("a launcher with NET_ADMIN passes baseline")
	}
}
