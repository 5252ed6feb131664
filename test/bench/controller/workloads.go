package main

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
)

const (
	floorNamespace = "bench-floor"
	vmNamespace    = "bench-vm"
	// creators is how many VMs the bench creates at once.
	creators = 16
)

type clients struct {
	kube kubernetes.Interface
	virt versioned.Interface
}

// onKwok places a workload on the fake nodes only: they are tainted so nothing else lands there.
var onKwok = struct {
	nodeSelector map[string]string
	tolerations  []corev1.Toleration
}{
	nodeSelector: map[string]string{"type": "kwok"},
	tolerations:  []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
}

func (c clients) kwokNodes(ctx context.Context) (int, error) {
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return 0, err
	}
	if len(nodes.Items) == 0 {
		return 0, fmt.Errorf("no kwok nodes: start the cluster with NODES=n (make bench-controller does)")
	}
	return len(nodes.Items), nil
}

// deploymentFloor is the time from creating a Deployment until all its pods run, and the CPU
// it took. It leaves the pods running: the caller deletes them.
func (c clients) deploymentFloor(ctx context.Context, replicas int) (float64, cpuTimes, error) {
	if err := c.freshNamespace(ctx, floorNamespace); err != nil {
		return 0, nil, err
	}
	running := podsRunning(ctx, c.kube, floorNamespace)
	labels := map[string]string{"app": "bench-floor"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "floor"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: onKwok.nodeSelector,
					Tolerations:  onKwok.tolerations,
					Containers:   []corev1.Container{{Name: "pause", Image: "vmctl/pause:devel"}},
				},
			},
		},
	}
	phase := startPhase()
	if _, err := c.kube.AppsV1().Deployments(floorNamespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return 0, nil, err
	}
	if err := running.waitFor(ctx, replicas); err != nil {
		return 0, nil, err
	}
	return phase.seconds(), phase.cpuSeconds(), nil
}

// vmsScheduled is the time from the first VM's creation until every instance is Scheduled,
// with the times at which the bench had created every VM and the controller every VMI, and
// the CPU it took.
func (c clients) vmsScheduled(ctx context.Context, count int) (stages, cpuTimes, error) {
	var st stages
	if err := c.freshNamespace(ctx, vmNamespace); err != nil {
		return st, nil, err
	}
	created, scheduled := instancesScheduled(ctx, c.virt, vmNamespace)
	phase := startPhase()
	names := make(chan int)
	errs := make(chan error, creators)
	var wg sync.WaitGroup
	for range creators {
		wg.Go(func() {
			for i := range names {
				if _, err := c.virt.KubevirtV1().VirtualMachines(vmNamespace).Create(ctx, benchVM(i), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range count {
		names <- i
	}
	close(names)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return st, nil, err
	}
	st.VMsCreated = phase.seconds()
	if err := created.waitFor(ctx, count); err != nil {
		return st, nil, err
	}
	st.VMIsCreated = phase.seconds()
	if err := scheduled.waitFor(ctx, count); err != nil {
		return st, nil, err
	}
	st.Scheduled = phase.seconds()
	return st, phase.cpuSeconds(), nil
}

// stages are seconds from the first VM's creation.
type stages struct {
	VMsCreated  float64 `json:"allVMsCreated"`
	VMIsCreated float64 `json:"allVMIsCreated"`
	Scheduled   float64 `json:"allVMIsScheduled"`
}

func benchVM(i int) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vm-%04d", i)},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(v1.RunStrategyAlways),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "bench-vm"}},
				Spec: v1.VirtualMachineInstanceSpec{
					NodeSelector: onKwok.nodeSelector,
					Tolerations:  onKwok.tolerations,
					Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					}},
				},
			},
		},
	}
}

func (c clients) freshNamespace(ctx context.Context, name string) error {
	if err := benchout.DeleteNamespace(ctx, c.kube, name); err != nil {
		return err
	}
	_, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

func (c clients) cleanup(ctx context.Context) error {
	return benchout.DeleteNamespace(ctx, c.kube, vmNamespace)
}
