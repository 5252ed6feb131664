package handler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
	"github.com/vmctl/vmctl/handler/podnet"
	"github.com/vmctl/vmctl/launcher/layout"
)

const (
	testNode   = "node-a"
	testPodUID = types.UID("11111111-2222-3333-4444-555555555555")
	testVMIUID = types.UID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
)

type fixture struct {
	t        *testing.T
	virt     *fake.Clientset
	lv       *fakeLibvirt
	c        *Controller
	recorder *record.FakeRecorder
	clock    *testingclock.FakePassiveClock
	root     string // the kubelet root
	vmis     cache.Indexer
	pods     cache.Indexer
	dials    int
	notReady bool
	// plumbed records each network plumbing as pid/podUID; plumbErr fails it.
	plumbed  []string
	plumbErr error
}

// newFixture builds a controller over informers holding vmi and pods, a fake libvirt and a
// kubelet root in a temporary directory with the pod's private directory.
func newFixture(t *testing.T, vmi *v1.VirtualMachineInstance, pods ...*corev1.Pod) *fixture {
	f := &fixture{t: t, virt: fake.NewSimpleClientset(vmi), lv: newFakeLibvirt(), recorder: record.NewFakeRecorder(50), root: t.TempDir()}
	kube := kubefake.NewSimpleClientset()
	virtInformers := informers.NewSharedInformerFactory(f.virt, 0)
	kubeInformers := kubeinformers.NewSharedInformerFactory(kube, 0)
	c, err := New(f.virt, virtInformers.Kubevirt().V1().VirtualMachineInstances(), nil, kubeInformers.Core().V1().Pods(), f.recorder, Options{
		NodeName: testNode, KubeletRoot: f.root, AllowEmulation: true,
		PlumbNetwork: func(pid int, podUID types.UID, _ podnet.Binding) error {
			f.plumbed = append(f.plumbed, fmt.Sprintf("%d/%s", pid, podUID))
			return f.plumbErr
		},
		Dial: func(_ context.Context, dir string) (Libvirt, error) {
			f.dials++
			if f.notReady {
				return nil, fmt.Errorf("%w: no socket in %s", ErrSocketNotReady, dir)
			}
			return f.lv, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clock = testingclock.NewFakePassiveClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	c.clock = f.clock
	c.gate = newLauncherGate(f.clock)
	f.vmis = virtInformers.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer()
	f.pods = kubeInformers.Core().V1().Pods().Informer().GetIndexer()
	_ = f.vmis.Add(vmi)
	for _, p := range pods {
		_ = f.pods.Add(p)
		if err := os.MkdirAll(PrivateDir(f.root, p.UID), 0o755); err != nil {
			t.Fatal(err)
		}
		// The launcher serves the guest's network, unless a test removes this.
		if err := os.WriteFile(filepath.Join(PrivateDir(f.root, p.UID), layout.NetworkReadyRel), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.c = c
	t.Cleanup(c.conns.closeAll)
	return f
}

// private is a path in the test pod's private directory.
func (f *fixture) private(rel string) string {
	return filepath.Join(PrivateDir(f.root, testPodUID), rel)
}

// sync runs one sync and returns the API writes it made.
func (f *fixture) sync() []string {
	f.t.Helper()
	f.virt.ClearActions()
	if err := f.c.sync(context.Background(), "ns/web"); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	return f.writes()
}

func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.virt.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			w += "/" + sub
		}
		out = append(out, w)
	}
	return out
}

// stored is the instance as the fake API server holds it.
func (f *fixture) stored() *v1.VirtualMachineInstance {
	vmi, err := f.virt.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return vmi
}

// observe puts the stored instance into the informer, as the watch would.
func (f *fixture) observe() {
	if err := f.vmis.Update(f.stored()); err != nil {
		f.t.Fatal(err)
	}
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// newInstance is a Scheduled instance on testNode with a containerDisk and a masquerade NIC.
func newInstance() *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: testVMIUID},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{
				Memory: &v1.Memory{Guest: ptrTo(resource.MustParse("128Mi"))},
				Devices: v1.Devices{
					Disks:      []v1.Disk{{Name: "root", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}},
					Interfaces: []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}},
				},
			},
			Volumes:  []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1"}}}},
			Networks: []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
		},
		Status: v1.VirtualMachineInstanceStatus{
			Phase:      v1.Scheduled,
			NodeName:   testNode,
			ActivePods: map[types.UID]string{testPodUID: testNode},
		},
	}
}

// newPod is the instance's running launcher pod on testNode.
func newPod(vmi *v1.VirtualMachineInstance) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "virt-launcher-web-x", Namespace: "ns", UID: testPodUID,
			Labels:          map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: string(vmi.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: corev1.PodSpec{NodeName: testNode, Containers: []corev1.Container{{Name: "compute", Image: "launcher:test"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.244.0.7",
			PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}, {IP: "fd00::7"}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }
