//go:build e2e

package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/vmctl"
)

// TestVmctlJobChecksItsOwnVM runs the example Job: vmctl is a native sidecar whose startup
// waits for its clone, the check beside it fetches the guest's page at localhost through
// vmctl's --forward, and when the check ends vmctl removes the clone. A check that fails
// fails its Job, and leaves no VM either.
func TestVmctlJobChecksItsOwnVM(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(f.Example("vmctl-job.yaml")...)
	failing := f.Example("vmctl-job.yaml")
	job := failing[0].(*batchv1.Job)
	job.Name = "vmctl-check-fails"
	job.Spec.Template.Spec.Containers[0].Args = []string{"get", "http://localhost:8000/absent"}
	f.CreateObjects(failing...)

	t.Run("a passing check completes the Job, and its clone is gone", func(t *testing.T) {
		pod := waitJob(t, f, "vmctl-check", batchv1.JobComplete)
		clone := vmctl.CloneName("testvm", pod.Name)
		out := containerLog(t, f, pod.Name, "check")
		if !strings.Contains(out, "200 OK") || !strings.Contains(out, "hostname="+clone) {
			t.Errorf("the check did not fetch its own guest's page (hostname=%s):\n%s", clone, out)
		}
		waitVMGone(t, f, clone)
	})
	t.Run("a failing check fails the Job, and its clone is gone", func(t *testing.T) {
		pod := waitJob(t, f, "vmctl-check-fails", batchv1.JobFailed)
		if out := containerLog(t, f, pod.Name, "check"); !strings.Contains(out, "404") {
			t.Errorf("the check did not fail on the guest's answer:\n%s", out)
		}
		waitVMGone(t, f, vmctl.CloneName("testvm", pod.Name))
	})
}

// TestVmctlFrontDoor runs the example Deployment whose vmctl pods forward their port 8000 to
// their guest's port 80: the Service selecting the vmctl pods answers from every clone's
// guest, and kubectl port-forward to a vmctl pod reaches that pod's guest.
func TestVmctlFrontDoor(t *testing.T) {
	f := framework.New(t)
	f.CreateObjects(f.Example("prototype-vm.yaml")...)
	f.CreateObjects(f.Example("vmctl-rbac.yaml")...)
	f.CreateObjects(f.Example("vmctl-front-door.yaml")...)
	f.WaitDeploymentReady(f.Namespace, "vmctl-web", vmctlTimeout)
	pods := f.WaitClonesRunning("testvm", "app=vmctl-web", 2, vmctlTimeout)

	t.Run("the Service of the vmctl pods answers from every clone's guest", func(t *testing.T) {
		serviceAnswersFrom(t, f, "vmctl-web", clonesOf("testvm", pods))
	})
	t.Run("kubectl port-forward to a vmctl pod reaches its guest", func(t *testing.T) {
		kubectl, err := apiserver.Tool("kubectl")
		if err != nil {
			t.Fatal(err)
		}
		port := startForward(t, f, kubectl, "port-forward", "pod/"+pods[0].Name, ":8000")
		want := "hostname=" + vmctl.CloneName("testvm", pods[0].Name)
		f.Eventually(vmctlTimeout, "the pod's own guest at local port", func(ctx context.Context) (bool, error) {
			body, err := get(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+"/")
			return strings.Contains(body, want), err
		})
	})

	f.Kubectl("scale", "deployment/vmctl-web", "--replicas=0")
	f.WaitNothingLeft("testvm", vmctlTimeout)
}

// waitJob waits until the Job has the condition and returns its pod.
func waitJob(t *testing.T, f *framework.Framework, name string, condition batchv1.JobConditionType) corev1.Pod {
	t.Helper()
	var ended batchv1.JobCondition
	f.Eventually(vmctlTimeout, "Job "+name+" to end", func(ctx context.Context) (bool, error) {
		job, err := f.Kube.BatchV1().Jobs(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
				ended = c
				return true, nil
			}
		}
		return false, nil
	})
	if ended.Type != condition {
		t.Fatalf("Job %s ended %s (%s: %s), want %s", name, ended.Type, ended.Reason, ended.Message, condition)
	}
	pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(f.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the pods of Job %s: %v (%d)", name, err, len(pods.Items))
	}
	return pods.Items[0]
}

func containerLog(t *testing.T, f *framework.Framework, pod, container string) string {
	t.Helper()
	out, err := f.Kube.CoreV1().Pods(f.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(f.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func waitVMGone(t *testing.T, f *framework.Framework, name string) {
	t.Helper()
	f.Eventually(vmctlTimeout, "VM "+name+" and its instance to be gone", func(ctx context.Context) (bool, error) {
		_, vmErr := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		_, vmiErr := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(vmErr) && apierrors.IsNotFound(vmiErr), nil
	})
}
