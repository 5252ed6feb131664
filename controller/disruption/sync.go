package disruption

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// namePrefix starts the name of every budget, as KubeVirt's do.
const namePrefix = "kubevirt-disruption-budget-"

// Protected says whether a drain must not evict the instance's launcher pod. External: the
// VM's owner moves it (vmctl deletes its clone when its own pod is evicted). LiveMigrate
// would migrate it, which admission refuses until migration exists.
func Protected(vmi *v1.VirtualMachineInstance) bool {
	s := vmi.Spec.EvictionStrategy
	return s != nil && *s == v1.EvictionStrategyExternal
}

// BudgetName is the name of the instance's budget: the instance's name when it fits, else
// its UID.
func BudgetName(vmi *v1.VirtualMachineInstance) string {
	if len(namePrefix)+len(vmi.Name) <= validation.DNS1123SubdomainMaxLength {
		return namePrefix + vmi.Name
	}
	return namePrefix + string(vmi.UID)
}

// sync makes the budget of an instance that needs one and does not have it. The budget is
// owned by the instance, so the garbage collector removes it with the instance; a pod that
// has ended or is being deleted is never held by it (the eviction API ignores budgets there).
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !Protected(vmi) || vmi.DeletionTimestamp != nil || vmi.Status.Phase.IsFinal() {
		return nil
	}
	if _, err := c.pdbLister.PodDisruptionBudgets(namespace).Get(BudgetName(vmi)); err == nil {
		// Ours, or an earlier instance's of the same name that the garbage collector is
		// removing: its delete event brings this instance back.
		return nil
	}
	_, err = c.kube.PolicyV1().PodDisruptionBudgets(namespace).Create(ctx, budget(vmi), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// budget keeps the instance's one launcher pod from being evicted: minAvailable 1 over the
// pods it created. A pod not yet ready is held too (the default unhealthy pod eviction
// policy), so a drain never cuts a boot short.
func budget(vmi *v1.VirtualMachineInstance) *policyv1.PodDisruptionBudget {
	selector := map[string]string{v1.CreatedByLabel: string(vmi.UID)}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Name:            BudgetName(vmi),
			Namespace:       vmi.Namespace,
			Labels:          map[string]string{v1.CreatedByLabel: string(vmi.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: selector},
		},
	}
}
