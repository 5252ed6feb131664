package vmctl

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
)

// fixture is a controller on a fake clientset, synced by hand.
type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	recorder *record.FakeRecorder
}

func newFixture(t *testing.T, objects ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, client: fake.NewSimpleClientset(objects...), recorder: record.NewFakeRecorder(20)}
	var err error
	f.c, err = NewController(f.client, testPod(), Options{Namespace: "apps", ProtoNamespace: "apps", Prototype: "testvm", PrototypeBackoffMax: time.Second}, f.recorder)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.c.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), f.c.synced...) {
		t.Fatal("cache did not sync")
	}
	return f
}

// sync runs one sync and returns its error and the events it recorded.
func (f *fixture) sync() ([]string, error) {
	err := f.c.sync(context.Background())
	var events []string
	for {
		select {
		case e := <-f.recorder.Events:
			events = append(events, e)
		default:
			return events, err
		}
	}
}

// waitCached waits until the informer sees the clone as want says.
func (f *fixture) waitCached(want func(*v1.VirtualMachine, error) bool) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !want(f.c.vmLister.VirtualMachines("apps").Get(f.c.cloneName)) {
		if time.Now().After(deadline) {
			f.t.Fatal("the informer did not catch up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasEvent(events []string, reason string) bool {
	for _, e := range events {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}

func TestSyncCreatesTheClone(t *testing.T) {
	f := newFixture(t, testPrototype())
	events, err := f.sync()
	if err != nil || !hasEvent(events, ReasonCloneCreated) {
		t.Fatalf("sync: %v, events %v", err, events)
	}
	clone, err := f.client.KubevirtV1().VirtualMachines("apps").Get(context.Background(), "testvm-vmctl-abc-12345", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, clone)
	if f.c.ready.Check() == nil {
		t.Error("ready before the clone is")
	}

	// The VM controller reports it Ready: so is vmctl.
	clone.Status.Ready = true
	if _, err := f.client.KubevirtV1().VirtualMachines("apps").UpdateStatus(context.Background(), clone, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitCached(func(vm *v1.VirtualMachine, err error) bool { return err == nil && vm.Status.Ready })
	if events, err := f.sync(); err != nil || hasEvent(events, ReasonCloneAdopted) {
		t.Fatalf("sync: %v, events %v (our own clone is not adopted)", err, events)
	}
	if err := f.c.ready.Check(); err != nil {
		t.Errorf("not ready with a Ready clone: %v", err)
	}
}

func TestSyncAdoptsOurClone(t *testing.T) {
	clone, err := Clone(testPrototype(), testPod(), "apps", nil)
	if err != nil {
		t.Fatal(err)
	}
	clone.UID, clone.Status.Ready = "clone-uid", true
	// No prototype: an adopted clone does not need it.
	f := newFixture(t, clone)
	events, err := f.sync()
	if err != nil || !hasEvent(events, ReasonCloneAdopted) {
		t.Fatalf("sync: %v, events %v", err, events)
	}
	if f.c.Clone() != "clone-uid" || f.c.ready.Check() != nil {
		t.Errorf("clone %q ready %v", f.c.Clone(), f.c.ready.Check())
	}
}

func TestSyncLeavesAnotherPodsClone(t *testing.T) {
	other := testPod()
	other.UID = "another-pod"
	clone, err := Clone(testPrototype(), other, "apps", nil)
	if err != nil {
		t.Fatal(err)
	}
	clone.Status.Ready = true
	f := newFixture(t, clone, testPrototype())
	events, err := f.sync()
	if err != nil || !hasEvent(events, ReasonOwnedByAnotherPod) {
		t.Fatalf("sync: %v, events %v", err, events)
	}
	if f.c.ready.Check() == nil {
		t.Error("ready on another pod's clone")
	}
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "delete" || a.GetVerb() == "update" || a.GetVerb() == "create" {
			t.Errorf("touched another pod's clone: %v", a)
		}
	}
}

// TestSyncBadPrototype: bad input leaves vmctl unready, retrying (an error for the queue's
// backoff), with one event saying why.
func TestSyncBadPrototype(t *testing.T) {
	malformed := testPrototype()
	malformed.Spec.Template = nil
	both := testPrototype()
	both.Spec.Running = ptr.To(true)
	forbidden := func(f *fixture) {
		f.client.PrependReactor("get", "virtualmachines", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, "testvm", nil)
		})
	}
	tests := []struct {
		name    string
		objects []runtime.Object
		setup   func(*fixture)
		reason  string
		message string
	}{
		{name: "prototype missing", reason: ReasonPrototypeUnavailable, message: "not found"},
		{name: "prototype in a namespace vmctl may not read", objects: []runtime.Object{testPrototype()}, setup: forbidden,
			reason: ReasonPrototypeUnavailable, message: "may not read"},
		{name: "prototype without template", objects: []runtime.Object{malformed}, reason: ReasonInvalidPrototype, message: "no spec.template"},
		{name: "prototype with running and runStrategy", objects: []runtime.Object{both}, reason: ReasonInvalidPrototype, message: "both spec.running and spec.runStrategy"},
		{name: "prototype with a read-write claim every clone would share", objects: []runtime.Object{withClaim()},
			reason: ReasonSharedVolume, message: "--allow-shared-volumes"},
		{name: "a volume bound to a pod volume the pod lacks", objects: []runtime.Object{withClaim()},
			setup: func(f *fixture) { f.c.podVolumes = map[string]string{"data": "data"} }, reason: ReasonInvalidVolumeMapping, message: `has no volume "data"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.objects...)
			if tt.setup != nil {
				tt.setup(f)
			}
			events, err := f.sync()
			if err == nil || len(events) != 1 || !strings.Contains(events[0], tt.reason) {
				t.Fatalf("sync: %v, events %v; want an error and one %s event", err, events, tt.reason)
			}
			if tt.message != "" && !strings.Contains(events[0], tt.message) && !strings.Contains(err.Error(), tt.message) {
				t.Errorf("event %q does not say %q", events[0], tt.message)
			}
			if events, err := f.sync(); err == nil || len(events) != 0 {
				t.Errorf("retry: %v, events %v; want the error again and no repeated event", err, events)
			}
			if f.c.ready.Check() == nil {
				t.Error("ready without a clone")
			}
		})
	}
}

// withClaim is the test prototype with a read-write claim, data.
func withClaim() *v1.VirtualMachine {
	proto := testPrototype()
	proto.Spec.Template.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	return proto
}

func TestSyncClonesSharedVolumesOnlyWhenAllowed(t *testing.T) {
	f := newFixture(t, withClaim())
	f.c.allowShared = true
	events, err := f.sync()
	if err != nil || !hasEvent(events, ReasonSharedVolume) || !hasEvent(events, ReasonCloneCreated) {
		t.Fatalf("sync: %v, events %v", err, events)
	}
}

func TestOwnedBy(t *testing.T) {
	pod := testPod()
	tests := []struct {
		name string
		vm   v1.VirtualMachine
		want bool
	}{
		{name: "annotation", vm: v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{PodUIDAnnotation: "pod-uid-1"}}}, want: true},
		{name: "other pod's annotation wins over owner", vm: v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{PodUIDAnnotation: "x"}, OwnerReferences: []metav1.OwnerReference{{UID: "pod-uid-1"}}}}},
		{name: "owner only", vm: v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "pod-uid-1"}}}}, want: true},
		{name: "neither", vm: v1.VirtualMachine{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OwnedBy(&tt.vm, pod); got != tt.want {
				t.Errorf("OwnedBy = %v, want %v", got, tt.want)
			}
		})
	}
}
