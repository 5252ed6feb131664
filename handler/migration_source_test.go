package handler

import (
	"strings"
	"testing"

	"github.com/digitalocean/go-libvirt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A handler that restarts while its migration copies memory lost libvirt's call: it aborts
// the job and decides by where the domain is.
func TestRestartMidCopyDecidesByTheDomain(t *testing.T) {
	for _, tc := range []struct {
		name           string
		domainHere     bool
		targetReported bool
		wantEnded      bool
		wantFailed     bool
	}{
		{"the domain still runs here", true, false, true, true},
		{"the domain left and runs on the target", false, true, true, false},
		{"the domain left, the target has not reported yet", false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase, vmi.Status.NodeName = v1.Running, testNode
			vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{
				MigrationUID: "m1", SourceNode: testNode, TargetNode: "node-b", TargetNodeAddress: "10.0.0.2",
				StartTimestamp: &metav1.Time{}, TargetNodeDomainDetected: tc.targetReported,
			}
			f := newFixture(t, vmi, newPod(vmi))
			if tc.domainHere {
				f.lv.set(domName, libvirt.DomainRunning, 1)
			}
			f.sync()
			s := f.stored().Status.MigrationState
			if s.Completed != tc.wantEnded || s.Failed != tc.wantFailed {
				t.Fatalf("state completed=%v failed=%v (%s), want %v %v", s.Completed, s.Failed, s.FailureReason, tc.wantEnded, tc.wantFailed)
			}
			if tc.wantFailed && !strings.Contains(s.FailureReason, "virt-handler restarted") {
				t.Errorf("failure reason = %q", s.FailureReason)
			}
			if f.lv.aborts != 1 {
				t.Errorf("aborts = %d, want the previous handler's job aborted once", f.lv.aborts)
			}
		})
	}
}
