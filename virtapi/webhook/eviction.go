package webhook

import (
	"context"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// Evictions intercepts evictions of launcher pods (kubectl drain) that must not simply end
// their guest, as KubeVirt's eviction admitter does since KubeVirt dropped its
// PodDisruptionBudgets:
//   - evictionStrategy LiveMigrate, or LiveMigrateIfPossible unless the instance reports
//     LiveMigratable False: it marks the instance for evacuation from the pod's node
//     (status.evacuationNodeName), which virt-controller's evacuation controller turns into a
//     migration;
//   - External: the instance's owner moves it (vmctl deletes its clone when its own pod is
//     evicted); it is marked the same way when it names External itself, so an owner may watch
//     for it, and the evacuation controller leaves it alone.
//
// Either way the eviction is refused with 429, as a disruption budget would, so the drain
// retries until the pod has ended. Default is the strategy of instances that name none.
type Evictions struct {
	Kube kubernetes.Interface
	Virt versioned.Interface
	// Default is the cluster's evictionStrategy for instances that name none.
	Default v1.EvictionStrategy
}

// evictionTimeout bounds the reads and the write of one review (the webhook's is 10 s).
const evictionTimeout = 8 * time.Second

func (e *Evictions) review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	ctx, cancel := context.WithTimeout(context.Background(), evictionTimeout)
	defer cancel()
	vmi, strategy, node, err := e.guardedInstance(ctx, req.Namespace, req.Name)
	if err != nil {
		// Better a drain that waits than a guest shut down because a read failed.
		return refuse(http.StatusInternalServerError, metav1.StatusReasonInternalError, fmt.Sprintf("checking the launcher pod's instance: %v", err))
	}
	if vmi == nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	external := strategy == v1.EvictionStrategyExternal
	if !external && !migratable(vmi) {
		// LiveMigrate and nothing else: the guest must not be shut down, nor can it move.
		c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable)
		return refuse(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			fmt.Sprintf("VMI %s/%s has evictionStrategy LiveMigrate but cannot live-migrate (%s: %s): stop it, or change what keeps it from migrating",
				vmi.Namespace, vmi.Name, c.Reason, c.Message))
	}
	mark := node != "" && node == vmi.Status.NodeName && (!external || vmi.Spec.EvictionStrategy != nil)
	if mark && (req.DryRun == nil || !*req.DryRun) {
		if err := e.markEvacuation(ctx, vmi, node); err != nil {
			return refuse(http.StatusInternalServerError, metav1.StatusReasonInternalError, fmt.Sprintf("marking the instance for evacuation: %v", err))
		}
		klog.InfoS("eviction triggered evacuation", "vmi", klog.KObj(vmi), "node", node, "strategy", strategy)
	}
	if external {
		return refuse(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			fmt.Sprintf("VMI %s/%s has evictionStrategy External: the launcher pod is not evicted, it goes when the VM's owner removes the VMI", vmi.Namespace, vmi.Name))
	}
	return refuse(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
		fmt.Sprintf("Eviction triggered evacuation of VMI %s/%s: it migrates off node %s", vmi.Namespace, vmi.Name, node))
}

// guardedInstance is the instance the pod runs when an eviction of that pod must be refused,
// with the instance's evictionStrategy (or the default) and the pod's node; nil when the
// eviction may go ahead: not a launcher pod of a live instance, or an instance that neither
// migrates on eviction nor is External. An External instance's pod is held from its start
// (Pending too, which a disruption budget would not hold), so a drain never cuts a boot
// short; a migrating one only while it runs in its current pod, the one a migration would move.
func (e *Evictions) guardedInstance(ctx context.Context, namespace, name string) (*v1.VirtualMachineInstance, v1.EvictionStrategy, string, error) {
	pod, err := e.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", "", nil
	}
	if err != nil {
		return nil, "", "", err
	}
	ref := metav1.GetControllerOf(pod)
	if pod.Labels[v1.AppLabel] != v1.LauncherApp || ref == nil || ref.Kind != "VirtualMachineInstance" ||
		pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil, "", "", nil
	}
	vmi, err := e.Virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", "", nil
	}
	if err != nil {
		return nil, "", "", err
	}
	if vmi.UID != ref.UID || vmi.DeletionTimestamp != nil || vmi.Status.Phase.IsFinal() {
		return nil, "", "", nil
	}
	strategy := vmi.Spec.EvictionStrategyOr(e.Default)
	migrates := strategy == v1.EvictionStrategyLiveMigrate || (strategy == v1.EvictionStrategyLiveMigrateIfPossible && migratable(vmi))
	running := vmi.Status.Phase == v1.Running && pod.Status.Phase == corev1.PodRunning && launcherpods.IsActive(vmi, pod)
	if strategy == v1.EvictionStrategyExternal || migrates && running {
		return vmi, strategy, pod.Spec.NodeName, nil
	}
	return nil, "", "", nil
}

// migratable: the instance does not report that it cannot live-migrate.
func migratable(vmi *v1.VirtualMachineInstance) bool {
	c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable)
	return c == nil || c.Status != corev1.ConditionFalse
}

// markEvacuation sets the instance's status.evacuationNodeName.
func (e *Evictions) markEvacuation(ctx context.Context, vmi *v1.VirtualMachineInstance, node string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if vmi.Status.EvacuationNodeName == node {
			return nil
		}
		vmi.Status.EvacuationNodeName = node
		_, err := vmistatus.Write(ctx, e.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace), vmi, false)
		if apierrors.IsConflict(err) {
			fresh, getErr := e.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
			if getErr != nil {
				return getErr
			}
			*vmi = *fresh
		}
		return err
	})
}

// refuse is a denial with an HTTP code the caller acts on (kubectl drain retries a 429).
func refuse(code int32, reason metav1.StatusReason, message string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}
