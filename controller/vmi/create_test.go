package vmi

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestLauncherPodName(t *testing.T) {
	vmi := newInstance()
	name := launcherPodName(vmi)
	if !strings.HasPrefix(name, "virt-launcher-web-") || len(name) != len("virt-launcher-web-")+5 {
		t.Errorf("name %q, want virt-launcher-web- and 5 characters", name)
	}
	if again := launcherPodName(vmi.DeepCopy()); again != name {
		t.Errorf("second name %q, want the first, %q", again, name)
	}
	other := vmi.DeepCopy()
	other.UID = "another-instance-of-the-same-name"
	if launcherPodName(other) == name {
		t.Errorf("two instances of the same name share the launcher name %q", name)
	}
	long := vmi.DeepCopy()
	long.Name = strings.Repeat("a", 63)
	if n := launcherPodName(long); len(n) != 63 {
		t.Errorf("name %q of %d characters, want 63: the longest hostname", n, len(n))
	}
}

// However a create comes to run twice for one instance (here: a second controller that knows
// nothing of the first's pod, whose cache is empty), one launcher pod exists, and the second
// controller takes it for the instance's own.
func TestASecondCreateFindsTheFirstPod(t *testing.T) {
	f := newFixture(t, newInstance())
	f.kube.PrependReactor("create", "pods", func(a core.Action) (bool, runtime.Object, error) {
		a.(core.CreateAction).GetObject().(*corev1.Pod).UID = "first-pod-uid" // as the API server would
		return false, nil, nil
	})
	if got, want := f.sync(), "create pods"; got != want {
		t.Fatalf("first sync: %s, want %s", got, want)
	}
	first := f.launchers(t)
	if len(first) != 1 || first[0].Name != launcherPodName(f.stored()) {
		t.Fatalf("launcher pods %v, want one named %s", first, launcherPodName(f.stored()))
	}
	f.c.created.forget("ns/web")
	f.c.expectations.Forget("ns/web")

	if got, want := f.sync(), "create pods"; got != want {
		t.Fatalf("second sync: %s, want %s (refused: the name is taken)", got, want)
	}
	if pods := f.launchers(t); len(pods) != 1 || pods[0].Name != first[0].Name {
		t.Fatalf("launcher pods %v, want only the first, %s", pods, first[0].Name)
	}
	if c := f.stored().Status.Condition(v1.VirtualMachineInstanceSynchronized); c != nil {
		t.Errorf("condition %+v, want none: the pod there is the instance's", c)
	}
	if f.c.created.get("ns/web") != "first-pod-uid" {
		t.Error("the second controller does not take the pod for the instance's")
	}
}

// A pod under the launcher's name that is not what the controller renders, or is going away,
// is not taken: the instance says why it does not start, and the create is retried.
func TestAPodUnderTheLauncherNameThatIsNotTheLauncher(t *testing.T) {
	tests := []struct {
		name   string
		change func(*corev1.Pod)
		want   string
	}{
		{"another command", func(p *corev1.Pod) { p.Spec.Containers[0].Command = []string{"/bin/sh"} }, "does not run what virt-controller renders"},
		{"another owner", func(p *corev1.Pod) { p.OwnerReferences[0].UID = types.UID("someone-else") }, "does not run what virt-controller renders"},
		{"being deleted", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }, "is being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newInstance()
			squatter := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:test"})
			squatter.Name, squatter.GenerateName = launcherPodName(vmi), ""
			tt.change(squatter)
			f := newFixture(t, vmi)
			_ = f.kube.Tracker().Add(squatter)
			if err := f.c.sync(context.Background(), "ns/web"); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("sync: %v, want an error saying %q", err, tt.want)
			}
			c := f.stored().Status.Condition(v1.VirtualMachineInstanceSynchronized)
			if c == nil || c.Reason != FailedCreate || !strings.Contains(c.Message, squatter.Name) {
				t.Errorf("condition %+v, want Synchronized False FailedCreate naming %s", c, squatter.Name)
			}
			select {
			case ev := <-f.c.recorder.(*record.FakeRecorder).Events:
				if !strings.HasPrefix(ev, "Warning FailedCreate") {
					t.Errorf("event %q, want a FailedCreate warning", ev)
				}
			default:
				t.Error("no event, want a FailedCreate warning")
			}
		})
	}
}

func (f *fixture) launchers(t *testing.T) []corev1.Pod {
	t.Helper()
	list, err := f.kube.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
