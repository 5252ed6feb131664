package vmi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// As in KubeVirt, an instance whose volumes name a claim that does not exist gets no launcher
// pod: the pod could not be scheduled anyway. The instance stays Pending and says which claim
// it waits for; the claim's creation (by the user, a StatefulSet, CDI) starts it.

// claimIndex indexes instances by the claims their volumes and hook sidecars name, and their
// state claim (vmstate.go), "<namespace>/<claim>".
const claimIndex = "vmi.claims"

// indexClaims adds claimIndex to the instances' informer, once.
func indexClaims(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[claimIndex]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{claimIndex: func(obj any) ([]string, error) {
		vmi, ok := obj.(*v1.VirtualMachineInstance)
		if !ok {
			return nil, nil
		}
		var keys []string
		for _, claim := range namedClaims(vmi) {
			keys = append(keys, vmi.Namespace+"/"+claim)
		}
		if vmi.Spec.KeepsState() {
			keys = append(keys, vmi.Namespace+"/"+stateClaim(vmi))
		}
		return keys, nil
	}})
}

// namedClaims are the claims the instance's volumes and hook sidecars name.
func namedClaims(vmi *v1.VirtualMachineInstance) []string {
	var claims []string
	for i := range vmi.Spec.Volumes {
		if pvc, ok := vmi.Spec.Volumes[i].Claim(); ok {
			claims = append(claims, pvc.ClaimName)
		}
	}
	return append(claims, sidecarClaims(vmi)...)
}

// enqueueClaimants queues the instances that name a claim just created.
func (c *Controller) enqueueClaimants(obj any) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	claimants, err := c.vmiIndexer.ByIndex(claimIndex, pvc.Namespace+"/"+pvc.Name)
	if err != nil {
		return
	}
	for _, vmi := range claimants {
		if key, err := cache.MetaNamespaceKeyFunc(vmi); err == nil {
			c.queue.Add(key)
		}
	}
}

// claimChanged queues a claim's instances when what their volume status says of it changed
// (a claim bound after its instance's pod was created gets its capacity then).
func (c *Controller) claimChanged(oldObj, newObj any) {
	before, ok1 := oldObj.(*corev1.PersistentVolumeClaim)
	after, ok2 := newObj.(*corev1.PersistentVolumeClaim)
	if ok1 && ok2 && !equality.Semantic.DeepEqual(claimInfo(before), claimInfo(after)) {
		c.enqueueClaimants(after)
	}
}

// missingClaim is the first claim the instance's volumes or hook sidecars name that does not
// exist, "" when they all do.
func (c *Controller) missingClaim(vmi *v1.VirtualMachineInstance) (string, error) {
	for _, claim := range namedClaims(vmi) {
		_, err := c.pvcs.PersistentVolumeClaims(vmi.Namespace).Get(claim)
		if apierrors.IsNotFound(err) {
			return claim, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", nil
}

// setClaimConditions says on the instance which claim it waits for (KubeVirt's Synchronized
// and PodScheduled conditions and event), or clears them once it waits for none. The event is
// recorded when the missing claim changes, not on every sync.
func (c *Controller) setClaimConditions(vmi *v1.VirtualMachineInstance, missing string) {
	s := &vmi.Status
	waiting := s.Condition(v1.VirtualMachineInstanceSynchronized)
	if waiting != nil && waiting.Reason != v1.VirtualMachineInstanceReasonPvcNotFound {
		waiting = nil
	}
	if missing == "" {
		if waiting != nil {
			s.RemoveCondition(v1.VirtualMachineInstanceSynchronized, v1.VirtualMachineInstanceReasonPvcNotFound)
			s.RemoveCondition(v1.VirtualMachineInstancePodScheduled, corev1.PodReasonUnschedulable)
		}
		return
	}
	message := fmt.Sprintf("PVC %s/%s does not exist, waiting for it to appear", vmi.Namespace, missing)
	if waiting == nil || waiting.Message != message {
		c.recorder.Event(vmi, corev1.EventTypeNormal, v1.VirtualMachineInstanceReasonPvcNotFound, message)
	}
	now := metav1.NewTime(c.clock.Now())
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
		Reason: v1.VirtualMachineInstanceReasonPvcNotFound, Message: message}, now)
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: message}, now)
}
