package launcherpods

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestClaiming(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid"}}
	owner := metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vm", UID: "vmi-uid", Controller: ptr.To(true)}
	pod := func(name, ns string, uid types.UID, age time.Duration, refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: map[string]string{v1.CreatedByLabel: string(uid)},
			OwnerReferences: refs, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age)),
		}}
	}
	tests := []struct {
		name string
		pods []*corev1.Pod
		want []string
	}{
		{name: "no pods", want: nil},
		{name: "label and controller reference, newest first",
			pods: []*corev1.Pod{pod("old", "ns", "vmi-uid", time.Hour, owner), pod("new", "ns", "vmi-uid", time.Minute, owner)},
			want: []string{"new", "old"}},
		{name: "label without a controller reference", pods: []*corev1.Pod{pod("planted", "ns", "vmi-uid", 0)}},
		{name: "another instance's pod", pods: []*corev1.Pod{pod("other", "ns", "other-uid", 0, owner)}},
		{name: "same label in another namespace", pods: []*corev1.Pod{pod("elsewhere", "other", "vmi-uid", 0, owner)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			informer := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
			launchers, err := Index(informer)
			if err != nil {
				t.Fatal(err)
			}
			// A second controller sharing the informer indexes it too.
			if _, err := Index(informer); err != nil {
				t.Fatalf("second Index: %v", err)
			}
			for _, p := range tt.pods {
				if err := informer.GetIndexer().Add(p); err != nil {
					t.Fatal(err)
				}
			}
			got, err := launchers.Claiming(vmi)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("Claiming = %v, want %v", names, tt.want)
			}
		})
	}
}
