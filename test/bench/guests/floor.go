package main

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/vmi"
	"github.com/vmctl/vmctl/launcher/layout"
)

// The floor is what booting the test guest costs with nothing of the platform: the very launcher
// pod a VM gets (same images, init containers, console-log sidecar, resources), whose compute
// container starts QEMU itself with the machine libvirt would give it. No libvirtd, no
// virt-handler, no controller: a pod and a guest. It reaches its guest's marker the same way
// (the console log, copied by the same sidecar), so the two are measured alike.

// floorPod is the launcher pod rendered for an instance named name, booting its guest directly.
func (b *bench) floorPod(name, ns string) *corev1.Pod {
	instance := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: b.guestSpec(name)}
	v1.SetDefaults_VirtualMachineInstanceSpec(&instance.Spec)
	// The local cluster runs guests under emulation, 100 vCPUs a requested CPU
	// (manifests/virt-controller.yaml).
	pod := vmi.RenderLauncherPod(instance, vmi.PodConfig{LauncherImage: launcherImage, UseEmulation: true, CPUAllocationRatio: 100})
	pod.Name, pod.GenerateName, pod.OwnerReferences, pod.Labels = name, "", nil, map[string]string{"app": "bench-floor"}
	pod.Spec.Containers[0].Command, pod.Spec.Containers[0].Args = b.qemuCommand(name), nil
	return pod
}

// qemuCommand is the QEMU command line libvirt builds for the test guest (handler/domain, as
// `ps` shows it in a launcher pod), less what only a managed QEMU needs (the monitor, the
// master key, -S) and with QEMU's own user-mode network in place of the tap the masquerade
// binding plumbs: the guest gets its address by DHCP either way.
func (b *bench) qemuCommand(hostname string) []string {
	spec := b.guestSpec(hostname)
	return []string{
		"/usr/bin/qemu-system-x86_64",
		"-name", "guest=" + hostname,
		"-machine", "pc-q35-7.2,usb=off,dump-guest-core=off", "-accel", "tcg", "-cpu", "Nehalem",
		"-m", strconv.FormatInt(b.memory.Value()>>20, 10), "-smp", "1",
		"-display", "none", "-no-user-config", "-nodefaults", "-rtc", "base=utc",
		"-kernel", layout.InPod(layout.KernelRel), "-initrd", layout.InPod(layout.InitrdRel),
		"-append", spec.Domain.Firmware.KernelBoot.KernelArgs,
		"-device", "pcie-root-port,port=8,chassis=1,id=pci.1,bus=pcie.0,multifunction=on,addr=0x1",
		"-device", "pcie-root-port,port=9,chassis=2,id=pci.2,bus=pcie.0,addr=0x1.0x1",
		"-device", "pcie-root-port,port=10,chassis=3,id=pci.3,bus=pcie.0,addr=0x1.0x2",
		"-device", "pcie-root-port,port=11,chassis=4,id=pci.4,bus=pcie.0,addr=0x1.0x3",
		"-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.2,addr=0x0",
		"-netdev", "user,id=hostnet0",
		"-device", "virtio-net-pci,netdev=hostnet0,id=net0,bus=pci.1,addr=0x0",
		// Appending, as libvirt's serial log does: the console sidecar truncates the file once it
		// has copied 1 MiB, and a QEMU writing on at its old offset would fill the gap with NULs
		// that the sidecar copies again and again (a guest that spewed kernel stall reports
		// before its marker turned 1 MiB into 15 MB of container log, rotated away with the
		// marker by the kubelet).
		"-chardev", "file,id=charserial0,path=" + layout.InPod(layout.ConsoleLogRel) + ",append=on",
		"-device", "isa-serial,chardev=charserial0,id=serial0,index=0",
		// The guest agent's port, as on every domain (nothing listens in the floor's guest).
		"-chardev", "socket,id=charchannel0,path=" + layout.InPod(layout.AgentSocketRel) + ",server=on,wait=off",
		"-device", "virtserialport,bus=virtio-serial0.0,nr=1,chardev=charchannel0,id=channel0,name=org.qemu.guest_agent.0",
		"-device", "virtio-balloon-pci,id=balloon0,bus=pci.3,addr=0x0",
		// The display every guest has by default, and its VNC server, as the domain's.
		"-vnc", "unix:" + layout.InPod(layout.VNCSocketRel),
		"-device", "VGA,id=video0,vgamem_mb=16,bus=pcie.0",
	}
}

// floorPods is the floor of scenario a: as many floor pods as VMs, created at the same pace.
func (b *bench) floorPods(ctx context.Context, ns string, w *watcher) ([]sample, error) {
	samples, err := b.paced(ctx, b.o.vms, func(i int) (string, error) {
		pod := b.floorPod(fmt.Sprintf("floor-%03d", i), ns)
		_, err := b.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return pod.Name, err
	})
	if err != nil {
		return nil, err
	}
	if err := w.allIn(ctx, "floor pods Running", w.podRunning, names(samples)); err != nil {
		return nil, err
	}
	for i := range samples {
		samples[i].running = w.at(w.podRunning, samples[i].name)
	}
	return samples, nil
}

// floorDeployment is the floor of scenario b: a Deployment of as many floor pods as the vmctl
// Deployment has replicas. A sample runs from its pod's first sighting, as vmctl's do.
func (b *bench) floorDeployment(ctx context.Context, ns string, w *watcher) ([]sample, error) {
	pod := b.floorPod("floor", ns)
	labels := map[string]string{"app": "bench-floor-deployment"}
	pod.Labels = labels
	// A Deployment's pods restart; a guest that stops is restarted like a vmctl clone.
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "floor", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(b.o.vmctlReplicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec},
		},
	}
	d.Spec.Template.Name, d.Spec.Template.Namespace = "", ""
	if _, err := b.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	pods, err := w.podsNamed(ctx, "floor-", b.o.vmctlReplicas)
	if err != nil {
		return nil, err
	}
	if err := w.allIn(ctx, "floor Deployment pods Running", w.podRunning, pods); err != nil {
		return nil, err
	}
	samples := make([]sample, len(pods))
	for i, p := range pods {
		samples[i] = sample{name: p, pod: p, created: w.at(w.podSeen, p), running: w.at(w.podRunning, p)}
	}
	return samples, nil
}
