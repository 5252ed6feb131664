package disruption

import (
	"context"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	virtfake "github.com/vmctl/vmctl/client/clientset/versioned/fake"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

func TestSyncGuardsLaunchersWhoseOwnerMovesThem(t *testing.T) {
	external := new(v1.EvictionStrategyExternal)
	none := new(v1.EvictionStrategyNone)
	instance := func(strategy *v1.EvictionStrategy, phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "testvm-pod", Namespace: "apps", UID: "uid-1"}}
		vmi.Spec.EvictionStrategy = strategy
		vmi.Status.Phase = phase
		return vmi
	}
	deleting := instance(external, v1.Running)
	deleting.DeletionTimestamp = &metav1.Time{}
	earlier := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: namePrefix + "testvm-pod", Namespace: "apps"}}
	for _, tc := range []struct {
		name     string
		vmi      *v1.VirtualMachineInstance
		existing *policyv1.PodDisruptionBudget
		want     bool // a budget created by this sync
	}{
		{"External", instance(external, v1.Running), nil, true},
		{"External, still scheduling", instance(external, v1.Scheduling), nil, true},
		{"no strategy: evicted as before", instance(nil, v1.Running), nil, false},
		{"None", instance(none, v1.Running), nil, false},
		{"ended", instance(external, v1.Succeeded), nil, false},
		{"being deleted", deleting, nil, false},
		{"has one already", instance(external, v1.Running), earlier, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset()
			vmis := informers.NewSharedInformerFactory(virtfake.NewClientset(), 0).Kubevirt().V1().VirtualMachineInstances()
			pdbs := kubeinformers.NewSharedInformerFactory(kube, 0).Policy().V1().PodDisruptionBudgets()
			c, err := New(kube, vmis, pdbs)
			if err != nil {
				t.Fatal(err)
			}
			if err := vmis.Informer().GetIndexer().Add(tc.vmi); err != nil {
				t.Fatal(err)
			}
			if tc.existing != nil {
				if err := pdbs.Informer().GetIndexer().Add(tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.sync(context.Background(), "apps/testvm-pod"); err != nil {
				t.Fatal(err)
			}
			got, err := kube.PolicyV1().PodDisruptionBudgets("apps").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if created := len(got.Items) == 1; created != tc.want {
				t.Fatalf("budget created: %v, want %v", created, tc.want)
			}
			if !tc.want {
				return
			}
			pdb := got.Items[0]
			if pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels[v1.CreatedByLabel] != "uid-1" {
				t.Errorf("budget %+v does not keep the instance's launcher pod", pdb.Spec)
			}
			if ref := metav1.GetControllerOf(&pdb); ref == nil || ref.UID != types.UID("uid-1") {
				t.Errorf("budget is not owned by its instance: %v", pdb.OwnerReferences)
			}
		})
	}
}

func TestBudgetNameFitsAnyInstanceName(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "testvm-pod", UID: "uid-1"}}
	if got := BudgetName(vmi); got != "kubevirt-disruption-budget-testvm-pod" {
		t.Errorf("BudgetName = %q", got)
	}
	vmi.Name = strings.Repeat("a", 253)
	if got := BudgetName(vmi); got != "kubevirt-disruption-budget-uid-1" {
		t.Errorf("BudgetName of a 253-character name = %q", got)
	}
}
