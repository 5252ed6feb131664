package vmi

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestRenderLauncherPod(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1", Labels: map[string]string{"app": "web", v1.NodeNameLabel: "node-a"}},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain:                        v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			NodeSelector:                  map[string]string{"disk": "ssd"},
			Tolerations:                   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})

	if pod.GenerateName != "virt-launcher-web-" {
		t.Errorf("generateName %q", pod.GenerateName)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != "uid-1" || ref.Kind != "VirtualMachineInstance" {
		t.Errorf("controller %+v, want the instance", ref)
	}
	for k, want := range map[string]string{"app": "web", v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: "uid-1"} {
		if pod.Labels[k] != want {
			t.Errorf("label %s=%q, want %q", k, pod.Labels[k], want)
		}
	}
	if _, ok := pod.Labels[v1.NodeNameLabel]; ok {
		t.Error("the pod carries the instance's node label (a migration target's pod runs elsewhere)")
	}
	if pod.Spec.NodeSelector["disk"] != "ssd" || pod.Spec.NodeSelector[v1.SchedulableLabel] != "true" || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("placement not copied: %v %v", pod.Spec.NodeSelector, pod.Spec.Tolerations)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || *pod.Spec.TerminationGracePeriodSeconds != shutdownMargin {
		t.Errorf("restart policy %s, grace %d", pod.Spec.RestartPolicy, *pod.Spec.TerminationGracePeriodSeconds)
	}
	want := resource.MustParse("64Mi")
	want.Add(LauncherOverhead)
	want.Add(GraphicsOverhead)
	if got := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]; got.Cmp(want) != 0 {
		t.Errorf("memory request %s, want %s", got.String(), want.String())
	}
	if vmi.Labels[v1.AppLabel] != "" {
		t.Error("rendering changed the instance's labels")
	}
}

func TestLauncherResources(t *testing.T) {
	mem := func(s string) resource.Quantity { return resource.MustParse(s) }
	tests := []struct {
		name        string
		domain      v1.DomainSpec
		wantRequest string
		wantLimit   string
	}{
		// 128Mi for libvirt and QEMU, 16Mi for the display's video RAM.
		{"request plus overhead", v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "400Mi", ""},
		{"guest memory wins", v1.DomainSpec{Memory: &v1.Memory{Guest: ptr.To(mem("1Gi"))}}, "1168Mi", ""},
		{"overcommitted overhead", v1.DomainSpec{Resources: v1.ResourceRequirements{OvercommitGuestOverhead: true, Requests: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "256Mi", ""},
		{"limit raised to hold the guest", v1.DomainSpec{Resources: v1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "400Mi", "400Mi"},
		{"swtpm beside QEMU", v1.DomainSpec{Devices: v1.Devices{TPM: &v1.TPMDevice{}}, Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "416Mi", ""},
		{"a disabled TPM", v1.DomainSpec{Devices: v1.Devices{TPM: &v1.TPMDevice{Enabled: ptr.To(false)}}, Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "400Mi", ""},
		{"no display", v1.DomainSpec{Devices: v1.Devices{AutoattachGraphicsDevice: ptr.To(false)}, Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem("256Mi")}}}, "384Mi", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := launcherResources(&v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Domain: tt.domain}}, PodConfig{UseEmulation: true})
			if got := r.Requests[corev1.ResourceMemory]; got.Cmp(mem(tt.wantRequest)) != 0 {
				t.Errorf("request %s, want %s", got.String(), tt.wantRequest)
			}
			limit, ok := r.Limits[corev1.ResourceMemory]
			if tt.wantLimit == "" && ok || tt.wantLimit != "" && limit.Cmp(mem(tt.wantLimit)) != 0 {
				t.Errorf("limit %v, want %q", r.Limits, tt.wantLimit)
			}
		})
	}
}

func TestLauncherCPURequest(t *testing.T) {
	cpu := func(s string) resource.Quantity { return resource.MustParse(s) }
	tests := []struct {
		name        string
		domain      v1.DomainSpec
		ratio       int64
		wantRequest string // "" means none: the API server takes the limit
	}{
		{"one vCPU, KubeVirt's ratio", v1.DomainSpec{}, 0, "100m"},
		{"four cores, two sockets", v1.DomainSpec{CPU: &v1.CPU{Cores: 4, Sockets: 2}}, 0, "800m"},
		{"the cluster's ratio", v1.DomainSpec{CPU: &v1.CPU{Cores: 2}}, 100, "20m"},
		{"never below a millicore", v1.DomainSpec{}, 5000, "1m"},
		{"the instance's own request", v1.DomainSpec{CPU: &v1.CPU{Cores: 4}, Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu("1500m")}}}, 0, "1500m"},
		{"a limit alone", v1.DomainSpec{Resources: v1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu("2")}}}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := launcherResources(&v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Domain: tt.domain}}, PodConfig{CPUAllocationRatio: tt.ratio})
			got, ok := r.Requests[corev1.ResourceCPU]
			if tt.wantRequest == "" && ok || tt.wantRequest != "" && got.Cmp(cpu(tt.wantRequest)) != 0 {
				t.Errorf("cpu request %v, want %q", r.Requests, tt.wantRequest)
			}
		})
	}
}

// TestEveryLauncherContainerRequestsCPUAndMemory: a ResourceQuota that counts requests.cpu or
// requests.memory (limits.*) refuses a pod any of whose containers, init containers included,
// names none.
func TestEveryLauncherContainerRequestsCPUAndMemory(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain:  v1.DomainSpec{Firmware: &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "kernel:1", KernelPath: "/vmlinuz"}}}},
			Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1"}}}},
		},
	}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})
	all := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	if len(all) < 5 {
		t.Fatalf("%d containers, want compute, tools, kernel-boot, the disk's and the console's", len(all))
	}
	for _, c := range all {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
				t.Errorf("container %s requests no %s: %v", c.Name, r, c.Resources.Requests)
			}
			// compute's limits are the instance's; every other container has its own.
			if _, ok := c.Resources.Limits[r]; !ok && c.Name != launcherContainer {
				t.Errorf("container %s has no %s limit: %v", c.Name, r, c.Resources.Limits)
			}
		}
	}
}

func TestLauncherPodTakesBootFilesFromTheirImages(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1"},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Firmware: &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{
				Image: "guest:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.img", ImagePullSecret: "creds"}}}},
			Volumes: []v1.Volume{
				{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1", ImagePullSecret: "creds"}}},
				{Name: "data", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}},
			},
		},
	}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})
	tests := []struct {
		name, image string
		command     []string
		sidecar     bool
	}{
		{"tools", "launcher:1", []string{"cp", "/usr/bin/virt-launcher", toolsBinary}, false},
		{"kernel-boot", "guest:1", []string{toolsBinary, "copy-file", "/boot/vmlinuz", "/var/run/kubevirt-private/kernel-boot/kernel", "/boot/initrd.img", "/var/run/kubevirt-private/kernel-boot/initrd"}, false},
		{"volume-root", "disk:1", []string{toolsBinary, "hold-disk", "/disk", "/var/run/kubevirt-private/vmi-disks/root"}, true},
		{"guest-console-log", "launcher:1", []string{"/usr/bin/virt-launcher", "guest-console-log"}, true},
	}
	if len(pod.Spec.InitContainers) != len(tests) {
		t.Fatalf("%d init containers, want %d", len(pod.Spec.InitContainers), len(tests))
	}
	for i, tt := range tests {
		c := pod.Spec.InitContainers[i]
		if c.Name != tt.name || c.Image != tt.image || !slices.Equal(c.Command, tt.command) {
			t.Errorf("init container %d: %s %s %v, want %s %s %v", i, c.Name, c.Image, c.Command, tt.name, tt.image, tt.command)
		}
		if sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways; sidecar != tt.sidecar {
			t.Errorf("init container %s: sidecar %v, want %v", c.Name, sidecar, tt.sidecar)
		}
	}
	if !ptr.Deref(pod.Spec.ShareProcessNamespace, false) {
		t.Error("the pod does not share its process namespace: QEMU cannot reach the containerDisk holder's files")
	}
	if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "creds" {
		t.Errorf("pull secrets %v, want creds once", pod.Spec.ImagePullSecrets)
	}
	compute := pod.Spec.Containers[0]
	if len(compute.VolumeMounts) != 1 || compute.VolumeMounts[0].MountPath != "/var/run/kubevirt-private" {
		t.Errorf("compute mounts %v, want the private directory", compute.VolumeMounts)
	}
	if caps := compute.SecurityContext.Capabilities; len(caps.Drop) != 1 || caps.Drop[0] != "ALL" || len(caps.Add) != 0 || ptr.Deref(compute.SecurityContext.Privileged, false) {
		t.Errorf("compute security context %+v, want all capabilities dropped, none added, not privileged", compute.SecurityContext)
	}
}

func TestLauncherPodCopiesItsToolsOnlyForImageContainers(t *testing.T) {
	pvc := v1.Volume{Name: "root", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "root"}}}
	containerDisk := v1.Volume{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1"}}}
	kernelBoot := &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "guest:1", KernelPath: "/vmlinuz"}}}
	tests := []struct {
		name     string
		volumes  []v1.Volume
		firmware *v1.Firmware
		want     bool
	}{
		{"no volumes", nil, nil, false},
		{"a PVC and an emptyDisk", []v1.Volume{pvc, {Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}}}, nil, false},
		{"a containerDisk", []v1.Volume{containerDisk}, nil, true},
		{"kernelBoot", nil, kernelBoot, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: tt.volumes, Domain: v1.DomainSpec{Firmware: tt.firmware}}}
			pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})
			hasContainer := slices.ContainsFunc(pod.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == "tools" })
			hasVolume := slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == toolsVolume })
			if hasContainer != tt.want || hasVolume != tt.want {
				t.Errorf("tools init container %v, its volume %v; want both %v", hasContainer, hasVolume, tt.want)
			}
		})
	}
}

func TestLauncherPodRequestsTheDevicesItsGuestUses(t *testing.T) {
	masquerade := v1.DomainSpec{Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}}}}
	tests := []struct {
		name      string
		domain    v1.DomainSpec
		emulation bool
		want      []corev1.ResourceName
	}{
		{"KVM and a pod NIC", masquerade, false, []corev1.ResourceName{layout.KVMResource, layout.TunResource}},
		{"emulation and a pod NIC", masquerade, true, []corev1.ResourceName{layout.TunResource}},
		{"KVM, no NIC", v1.DomainSpec{}, false, []corev1.ResourceName{layout.KVMResource}},
		{"emulation, no NIC", v1.DomainSpec{}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Domain: tt.domain}}
			r := launcherResources(vmi, PodConfig{UseEmulation: tt.emulation})
			for _, name := range []corev1.ResourceName{layout.KVMResource, layout.TunResource} {
				limit, hasLimit := r.Limits[name]
				request := r.Requests[name]
				if want := slices.Contains(tt.want, name); want != hasLimit || want && (limit.Value() != 1 || request.Value() != 1) {
					t.Errorf("%s: limit %v request %v, want requested: %v", name, r.Limits, r.Requests, want)
				}
			}
		})
	}
}

// The kubelet sets up only the volumes some container mounts: a Secret cloud-init reads must
// be mounted (optionally: a missing one fails the instance at the node, saying which).
func TestLauncherPodMountsTheSecretsItsGuestReads(t *testing.T) {
	ref := &corev1.LocalObjectReference{Name: "seed"}
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{
		Volumes: []v1.Volume{
			{Name: "a", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserDataSecretRef: ref, NetworkDataSecretRef: ref}}},
			{Name: "b", VolumeSource: v1.VolumeSource{CloudInitConfigDrive: &v1.CloudInitConfigDriveSource{NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "net"}}}},
		},
		AccessCredentials: []v1.AccessCredential{{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
			Source: v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "keys"}}}}},
	}}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})
	var secrets []string
	for _, vol := range pod.Spec.Volumes {
		if s := vol.Secret; s != nil {
			secrets = append(secrets, s.SecretName)
			if !ptr.Deref(s.Optional, false) {
				t.Errorf("secret volume %s is required: a missing secret would hold the pod in ContainerCreating", vol.Name)
			}
			if !slices.ContainsFunc(pod.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == vol.Name && m.ReadOnly }) {
				t.Errorf("secret volume %s is not mounted (read-only) in compute: the kubelet would not set it up", vol.Name)
			}
		}
	}
	if want := []string{"seed", "net", "keys"}; !slices.Equal(secrets, want) {
		t.Errorf("secret volumes %v, want %v once each", secrets, want)
	}
}

// Keys and passwords propagated through the guest agent are the launcher's to set: it gets
// each Secret's mount (and the users a key is for).
func TestLauncherSetsTheCredentialsTheGuestAgentPropagates(t *testing.T) {
	key := func(secret string, m v1.SSHPublicKeyAccessCredentialPropagationMethod) v1.AccessCredential {
		return v1.AccessCredential{SSHPublicKey: &v1.SSHPublicKeyAccessCredential{
			Source:            v1.SSHPublicKeyAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: secret}},
			PropagationMethod: m}}
	}
	agent := func(users ...string) v1.SSHPublicKeyAccessCredentialPropagationMethod {
		return v1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: users}}
	}
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: v1.VirtualMachineInstanceSpec{
		AccessCredentials: []v1.AccessCredential{
			key("seed", v1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &v1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}),
			key("ops", agent("root", "debian")),
			key("dev", agent("dev")),
			{UserPassword: &v1.UserPasswordAccessCredential{
				Source:            v1.UserPasswordAccessCredentialSource{Secret: &v1.AccessCredentialSecretSource{SecretName: "ops"}},
				PropagationMethod: v1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &v1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}}}},
		}}}
	args := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"}).Spec.Containers[0].Args
	got := map[string][]string{}
	for i, a := range args {
		if a == "--agent-ssh-keys" || a == "--agent-passwords" {
			got[a] = append(got[a], args[i+1])
		}
	}
	want := map[string][]string{
		"--agent-ssh-keys":  {"/var/run/kubevirt-secrets/secret-2:root,debian", "/var/run/kubevirt-secrets/secret-3:dev"},
		"--agent-passwords": {"/var/run/kubevirt-secrets/secret-2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("launcher args (-want +got):\n%s", diff)
	}
}

// The pod interface's dhcpOptions reach the launcher, whose DHCP server hands them out.
func TestLauncherGetsTheInterfacesDHCPOptions(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{Devices: v1.Devices{Interfaces: []v1.Interface{{Name: "default",
			InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}},
			DHCPOptions: &v1.DHCPOptions{BootFileName: "pxelinux.0", TFTPServerName: "tftp", NTPServers: []string{"10.0.0.1", "10.0.0.2"},
				PrivateOptions: []v1.DHCPPrivateOptions{{Option: 240, Value: "extra"}}}}}}},
		Networks: []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
	}}
	args := strings.Join(RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"}).Spec.Containers[0].Args, " ")
	want := "--dhcp-boot-file-name pxelinux.0 --dhcp-tftp-server-name tftp --dhcp-ntp-server 10.0.0.1 --dhcp-ntp-server 10.0.0.2 --dhcp-private-option 240=extra --network masquerade"
	if !strings.Contains(args, want) {
		t.Errorf("launcher args %q, want %q", args, want)
	}
}

// Downward metrics: the launcher makes the volume's disk and answers the device's port, and
// reports the node it runs on, which the kubelet puts in its environment.
func TestLauncherServesDownwardMetrics(t *testing.T) {
	for name, tc := range map[string]struct {
		spec v1.VirtualMachineInstanceSpec
		want string
	}{
		"none": {spec: v1.VirtualMachineInstanceSpec{}},
		"volume": {spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{{Name: "metrics",
			VolumeSource: v1.VolumeSource{DownwardMetrics: &v1.DownwardMetricsVolumeSource{}}}}},
			want: "--downward-metrics-disk --node-name $(NODE_NAME)"},
		"device": {spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{DownwardMetrics: &v1.DownwardMetrics{}}}},
			want: "--downward-metrics-port --node-name $(NODE_NAME)"},
	} {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}, Spec: tc.spec}
		c := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"}).Spec.Containers[0]
		args := strings.Join(c.Args, " ")
		if got := strings.Contains(args, "--node-name"); got != (tc.want != "") || !strings.Contains(args, tc.want) {
			t.Errorf("%s: launcher args %q, want %q", name, args, tc.want)
		}
		if tc.want == "" {
			if c.Env != nil {
				t.Errorf("%s: environment %v, want none", name, c.Env)
			}
			continue
		}
		if len(c.Env) != 1 || c.Env[0].Name != "NODE_NAME" || c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
			t.Errorf("%s: environment %+v, want NODE_NAME from spec.nodeName", name, c.Env)
		}
	}
}
