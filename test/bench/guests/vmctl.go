package main

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

const prototype = "proto"

// vmctlDeployment is scenario b: a Deployment of vmctl pods, each cloning a halted prototype
// into prototype-<pod>. A sample runs from its pod's first sighting to its clone Running.
func (b *bench) vmctlDeployment(ctx context.Context, ns string, w *watcher) ([]sample, error) {
	if err := b.vmctlAccess(ctx, ns); err != nil {
		return nil, err
	}
	if _, err := b.virt.KubevirtV1().VirtualMachines(ns).Create(ctx, b.vm(prototype, v1.RunStrategyHalted), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := b.kube.AppsV1().Deployments(ns).Create(ctx, vmctlDeployment(b.o.vmctlReplicas), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var pods []string
	err := w.until(ctx, "vmctl pods", func() (bool, string) {
		pods = pods[:0]
		for name := range w.podSeen {
			if strings.HasPrefix(name, "vmctl-") {
				pods = append(pods, name)
			}
		}
		return len(pods) >= b.o.vmctlReplicas, fmt.Sprintf("%d of %d", len(pods), b.o.vmctlReplicas)
	})
	if err != nil {
		return nil, err
	}
	samples := make([]sample, len(pods))
	for i, pod := range pods {
		samples[i] = sample{name: prototype + "-" + pod, created: w.at(w.podSeen, pod)}
	}
	return samples, b.instancesRunning(ctx, w, samples)
}

// vmctlAccess is the namespaced access vmctl needs, as examples/vmctl-rbac.yaml grants it.
func (b *bench) vmctlAccess(ctx context.Context, ns string) error {
	rbac := b.kube.RbacV1()
	if _, err := b.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "vmctl"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "vmctl"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{v1.GroupName}, Resources: []string{"virtualmachines"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
	}}
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "vmctl"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "vmctl"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "vmctl", Namespace: ns}}}
	_, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
	return err
}

func vmctlDeployment(replicas int) *appsv1.Deployment {
	labels := map[string]string{"app": "vmctl-bench"}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "vmctl"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "vmctl",
					Containers: []corev1.Container{{
						Name: "vmctl", Image: vmctlImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{prototype},
						Env:  []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")},
					}},
				},
			},
		},
	}
}
