package manager

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LauncherImageContainer names the init container of virt-controller's own pod that carries
// the launcher image. The image lives in a pod template, not in a flag, so kustomize's image
// transformer (`kustomize edit set image vmctl/virt-launcher=...`) and any other tool that
// rewrites container images reach it; changing it also rolls virt-controller, which then
// reads the new one. The container itself only checks that the image can be pulled and run.
const LauncherImageContainer = "virt-launcher-image"

// LauncherImageFromPod reads the image of the LauncherImageContainer init container of the
// pod namespace/name (virt-controller's own).
func LauncherImageFromPod(ctx context.Context, kube kubernetes.Interface, namespace, name string) (string, error) {
	pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the launcher image from this pod: %w", err)
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == LauncherImageContainer && c.Image != "" {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no init container %q naming the launcher image: set --launcher-image", namespace, name, LauncherImageContainer)
}

// SiblingImage is the platform's image name beside the launcher image: the same repository
// path and tag ("vmctl/virt-launcher:devel" -> "vmctl/sidecar-shim:devel"), as KubeVirt takes
// its sidecar-shim from its own registry. A launcher pinned by digest gives no tag.
func SiblingImage(launcher, name string) string {
	launcher, _, _ = strings.Cut(launcher, "@")
	dir, base := "", launcher
	if i := strings.LastIndex(launcher, "/"); i >= 0 {
		dir, base = launcher[:i+1], launcher[i+1:]
	}
	if _, tag, ok := strings.Cut(base, ":"); ok {
		return dir + name + ":" + tag
	}
	return dir + name
}
