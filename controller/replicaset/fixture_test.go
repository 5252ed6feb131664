package replicaset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
)

// fixture is a controller over a fake client whose informer caches are filled by hand, so a
// test states exactly what the controller sees and checks exactly what it writes.
type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	recorder *record.FakeRecorder
	c        *Controller
	factory  informers.SharedInformerFactory
}

func newFixture(t *testing.T, rss []*v1.VirtualMachineInstanceReplicaSet, vmis []*v1.VirtualMachineInstance) *fixture {
	var objects []runtime.Object
	for _, rs := range rss {
		objects = append(objects, rs)
	}
	for _, vmi := range vmis {
		objects = append(objects, vmi)
	}
	f := &fixture{t: t, client: fake.NewSimpleClientset(objects...), recorder: record.NewFakeRecorder(100)}
	// The fake tracker does not complete generateName as the API server does.
	var seq atomic.Int32
	f.client.PrependReactor("create", "virtualmachineinstances", func(action core.Action) (bool, runtime.Object, error) {
		vmi := action.(core.CreateAction).GetObject().(*v1.VirtualMachineInstance)
		if vmi.Name == "" {
			vmi.Name = fmt.Sprintf("%s%05d", vmi.GenerateName, seq.Add(1))
			vmi.UID = types.UID(vmi.Name + "-uid")
		}
		return false, nil, nil
	})
	f.factory = informers.NewSharedInformerFactory(f.client, 0)
	c, err := New(f.client, f.factory.Kubevirt().V1().VirtualMachineInstanceReplicaSets(), f.factory.Kubevirt().V1().VirtualMachineInstances(), f.recorder)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss {
		_ = f.rsIndexer().Add(rs)
	}
	for _, vmi := range vmis {
		_ = f.factory.Kubevirt().V1().VirtualMachineInstances().Informer().GetIndexer().Add(vmi)
	}
	f.c = c
	return f
}

func (f *fixture) rsIndexer() cache.Indexer {
	return f.factory.Kubevirt().V1().VirtualMachineInstanceReplicaSets().Informer().GetIndexer()
}

// sync runs one sync of the key, which must succeed, and returns the write actions it made.
func (f *fixture) sync(key string) []core.Action {
	f.t.Helper()
	writes, err := f.trySync(key)
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	return writes
}

func (f *fixture) trySync(key string) ([]core.Action, error) {
	f.client.ClearActions()
	err := f.c.sync(context.Background(), key)
	var writes []core.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes, err
}

// storedRS is the replica set as the fake API server holds it.
func (f *fixture) storedRS() *v1.VirtualMachineInstanceReplicaSet {
	f.t.Helper()
	rs, err := f.client.KubevirtV1().VirtualMachineInstanceReplicaSets("ns").Get(context.Background(), "rs", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

// events drains the recorded events.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// verbs summarises actions, counting consecutive repeats: "create virtualmachineinstances x3, ...".
func verbs(actions []core.Action) string {
	var out []string
	last, count := "", 0
	flush := func() {
		switch {
		case count == 1:
			out = append(out, last)
		case count > 1:
			out = append(out, fmt.Sprintf("%s x%d", last, count))
		}
	}
	for _, a := range actions {
		v := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			v += "/" + sub
		}
		if v != last {
			flush()
			last, count = v, 0
		}
		count++
	}
	flush()
	return strings.Join(out, ", ")
}

// deleted are the names the actions deleted, sorted.
func deleted(actions []core.Action) []string {
	var names []string
	for _, a := range actions {
		if d, ok := a.(core.DeleteAction); ok {
			names = append(names, d.GetName())
		}
	}
	sort.Strings(names)
	return names
}

var created0 = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))

func newRS(replicas int32) *v1.VirtualMachineInstanceReplicaSet {
	return &v1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs-uid", Generation: 1},
		Spec: v1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "kept"}},
				Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
					Resources: v1.ResourceRequirements{Requests: k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("64Mi")}},
				}},
			},
		},
	}
}

// instance is a replica the replica set controls, created age minutes after created0.
func instance(rs *v1.VirtualMachineInstanceReplicaSet, name string, phase v1.VirtualMachineInstancePhase, ready bool, age int) *v1.VirtualMachineInstance {
	vmi := renderInstance(rs)
	vmi.Name, vmi.GenerateName, vmi.UID = name, "", types.UID(name+"-uid")
	vmi.CreationTimestamp = metav1.NewTime(created0.Add(time.Duration(age) * time.Minute))
	vmi.Status.Phase = phase
	if ready {
		vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: k8sv1.ConditionTrue}}
	}
	return vmi
}
