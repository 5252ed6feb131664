package vmi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// createPod creates the instance's launcher pod, under the one name the instance's launcher
// can have (launcherPodName). Whatever made a create run twice for one instance (a cache that
// had not shown the first pod yet, a second virt-controller process that overlapped the first
// during a rollout), the second create finds the first pod instead of starting a second
// launcher.
func (c *Controller) createPod(ctx context.Context, key string, vmi *v1.VirtualMachineInstance) error {
	cfg := c.config
	cfg.AutoLimits = c.quotas.AutoLimits(vmi.Namespace)
	block, err := BlockVolumes(vmi, c.pvcs)
	if err != nil {
		return err
	}
	cfg.BlockVolumes = block
	want := RenderLauncherPod(vmi, cfg)
	want.Name, want.GenerateName = launcherPodName(vmi), ""
	c.expectations.ExpectCreations(key, 1)
	pod, err := c.kube.CoreV1().Pods(vmi.Namespace).Create(ctx, want, metav1.CreateOptions{})
	taken := false
	if apierrors.IsAlreadyExists(err) {
		pod, err = c.existingLauncher(ctx, vmi, want)
		taken = err == nil
	}
	if err != nil || taken {
		c.expectations.CreationObserved(key) // this create adds no pod
	}
	if err != nil {
		if !controller.NamespaceTerminating(err) {
			c.recorder.Eventf(vmi, corev1.EventTypeWarning, FailedCreate, "Error creating pod: %v", err)
		}
		return err
	}
	if taken {
		// Rare, and a sign of a race worth finding: say so.
		klog.FromContext(ctx).Info("launcher pod exists already, taken as the instance's", "vmi", key, "pod", pod.Name,
			"podUID", pod.UID, "remembered", c.created.get(key))
	} else {
		c.recorder.Eventf(vmi, corev1.EventTypeNormal, SuccessfulCreate, "Created virtual machine pod %s", pod.Name)
	}
	c.created.set(key, pod.UID)
	return nil
}

// existingLauncher reads the pod that holds the launcher's name from the API server (the cache
// may not have it yet) and returns it if it is the launcher this controller renders for the
// instance. Anything else under that name (a pod still being deleted, one someone else made)
// is an error the instance's Synchronized condition shows; the create is retried.
func (c *Controller) existingLauncher(ctx context.Context, vmi *v1.VirtualMachineInstance, want *corev1.Pod) (*corev1.Pod, error) {
	pod, err := c.kube.CoreV1().Pods(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ref := metav1.GetControllerOf(pod)
	switch {
	case ref == nil || ref.UID != vmi.UID || !sameContainers(pod, want):
		return nil, fmt.Errorf("pod %s exists and does not run what virt-controller renders for this instance: delete it to start the instance", pod.Name)
	case pod.DeletionTimestamp != nil:
		return nil, fmt.Errorf("pod %s, an earlier launcher pod of this instance, is being deleted", pod.Name)
	}
	return pod, nil
}

// maxGeneratedNameLength is what the API server keeps of a generateName prefix: the 5
// characters after it make 63, the longest hostname a pod can take from its name.
const maxGeneratedNameLength = 58

// launcherPodName is KubeVirt's launcher pod name, virt-launcher-<instance>-<5 characters>,
// with the characters derived from the instance's UID instead of drawn at random: one
// instance has one name for its launcher pod, so the API server refuses a second one.
func launcherPodName(vmi *v1.VirtualMachineInstance) string {
	prefix := "virt-launcher-" + vmi.Name + "-"
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	sum := sha256.Sum256([]byte(vmi.UID))
	return prefix + utilrand.SafeEncodeString(hex.EncodeToString(sum[:])[:5])
}
