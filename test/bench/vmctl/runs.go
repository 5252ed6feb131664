package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/vmctl"
)

// poll is how often the bench looks: the resolution of its figures.
const poll = 50 * time.Millisecond

type bench struct {
	kube      kubernetes.Interface
	virt      versioned.Interface
	image     string
	namespace string
	proto     *v1.VirtualMachine
}

// setUp makes a namespace with the example prototype and vmctl's Role.
func (b *bench) setUp(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join("examples", "prototype-vm.yaml"))
	if err != nil {
		return fmt.Errorf("run from the repository's root: %w", err)
	}
	b.proto = &v1.VirtualMachine{}
	if err := yaml.UnmarshalStrict(data, b.proto); err != nil {
		return err
	}
	ns, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-vmctl-"}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	b.namespace = ns.Name
	klog.InfoS("bench namespace", "namespace", b.namespace)
	if _, err := b.virt.KubevirtV1().VirtualMachines(b.namespace).Create(ctx, b.proto, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := b.kube.CoreV1().ServiceAccounts(b.namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "vmctl"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "vmctl"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{v1.SchemeGroupVersion.Group}, Resources: []string{"virtualmachines"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
		{APIGroups: []string{v1.SchemeGroupVersion.Group}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}
	if _, err := b.kube.RbacV1().Roles(b.namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "vmctl"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "vmctl"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "vmctl", Namespace: b.namespace}},
	}
	_, err = b.kube.RbacV1().RoleBindings(b.namespace).Create(ctx, binding, metav1.CreateOptions{})
	return err
}

func (b *bench) tearDown() {
	if b.namespace == "" {
		return
	}
	if err := b.kube.CoreV1().Namespaces().Delete(context.Background(), b.namespace, metav1.DeleteOptions{}); err != nil {
		klog.ErrorS(err, "deleting the bench namespace")
	}
}

// direct creates the prototype's VM under its own name, running, and times creation ->
// instance Running.
func (b *bench) direct(ctx context.Context, i int) (time.Duration, error) {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("direct-%d", i), Labels: b.proto.Labels}, Spec: *b.proto.Spec.DeepCopy()}
	vm.Spec.RunStrategy = ptr.To(v1.RunStrategyAlways)
	start := time.Now()
	if _, err := b.virt.KubevirtV1().VirtualMachines(b.namespace).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	if err := b.waitVMIRunning(ctx, vm.Name); err != nil {
		return 0, err
	}
	took := time.Since(start)
	return took, b.deleteVM(ctx, vm.Name)
}

// cloned starts a bare vmctl pod and times its phase Running -> its clone's instance Running,
// and (for scale) its creation -> that instance Running.
func (b *bench) cloned(ctx context.Context, i int) (fromRunning, fromCreate time.Duration, err error) {
	pod := b.vmctlPod(fmt.Sprintf("vmctl-%d", i))
	created := time.Now()
	if _, err := b.kube.CoreV1().Pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	var start time.Time
	err = wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		got, err := b.kube.CoreV1().Pods(b.namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		start = time.Now()
		return got.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return 0, 0, err
	}
	clone := vmctl.CloneName(b.proto.Name, pod.Name)
	if err := b.waitVMIRunning(ctx, clone); err != nil {
		return 0, 0, err
	}
	fromRunning, fromCreate = time.Since(start), time.Since(created)
	// vmctl deletes its clone on SIGTERM; wait for it so runs never overlap.
	if err := b.kube.CoreV1().Pods(b.namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		return 0, 0, err
	}
	if err := b.waitGone(ctx, clone); err != nil {
		return 0, 0, err
	}
	return fromRunning, fromCreate, wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		_, err := b.kube.CoreV1().Pods(b.namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func (b *bench) vmctlPod(name string, flags ...string) *corev1.Pod {
	env := func(name, field string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "vmctl"}},
		Spec: corev1.PodSpec{
			ServiceAccountName:            "vmctl",
			TerminationGracePeriodSeconds: ptr.To[int64](60),
			Containers: []corev1.Container{{
				Name: "vmctl", Image: b.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: append(flags, b.proto.Name),
				Env:  []corev1.EnvVar{env(vmctl.PodNameEnv, "metadata.name"), env(vmctl.PodNamespaceEnv, "metadata.namespace")},
			}},
		},
	}
}

func (b *bench) waitVMIRunning(ctx context.Context, name string) error {
	return wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		vmi, err := b.virt.KubevirtV1().VirtualMachineInstances(b.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if vmi.Status.Phase == v1.Failed {
			return false, errors.New("instance " + name + " failed")
		}
		return vmi.Status.Phase == v1.Running, nil
	})
}

func (b *bench) deleteVM(ctx context.Context, name string) error {
	if err := b.virt.KubevirtV1().VirtualMachines(b.namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return b.waitGone(ctx, name)
}

// waitGone waits until neither the VM nor its instance exists: the next run starts on an idle node.
func (b *bench) waitGone(ctx context.Context, name string) error {
	return wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, vmErr := b.virt.KubevirtV1().VirtualMachines(b.namespace).Get(ctx, name, metav1.GetOptions{})
		_, vmiErr := b.virt.KubevirtV1().VirtualMachineInstances(b.namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(vmErr) && apierrors.IsNotFound(vmiErr), nil
	})
}
