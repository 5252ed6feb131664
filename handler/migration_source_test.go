package handler

import (
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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

func TestMigrationTuning(t *testing.T) {
	for _, tc := range []struct {
		name         string
		config       *v1.MigrationConfiguration
		wantMiB      uint64
		wantConverge bool
		wantTimeout  time.Duration
		wantUnsafe   bool
	}{
		{"no configuration: KubeVirt's timeout, auto-converge", nil, 0, true, 150 * time.Second, false},
		{"a cap in MiB", &v1.MigrationConfiguration{BandwidthPerMigration: ptr.To(resource.MustParse("8Mi"))}, 8, true, 150 * time.Second, false},
		{"a cap under 1 MiB/s rounds up", &v1.MigrationConfiguration{BandwidthPerMigration: ptr.To(resource.MustParse("100Ki"))}, 1, true, 150 * time.Second, false},
		{"zero is unlimited", &v1.MigrationConfiguration{BandwidthPerMigration: ptr.To(resource.MustParse("0"))}, 0, true, 150 * time.Second, false},
		{"auto-converge off, a shorter timeout", &v1.MigrationConfiguration{AllowAutoConverge: ptr.To(false), CompletionTimeoutPerGiB: ptr.To(int64(40))}, 0, false, 40 * time.Second, false},
		{"libvirt's safety checks overridden", &v1.MigrationConfiguration{UnsafeMigrationOverride: ptr.To(true)}, 0, true, 150 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationConfiguration: tc.config}
			mib, converge, unsafe := migrationTuning(vmi)
			if mib != tc.wantMiB || converge != tc.wantConverge || unsafe != tc.wantUnsafe {
				t.Errorf("tuning = %d MiB/s, auto-converge %v, unsafe %v; want %d, %v, %v", mib, converge, unsafe, tc.wantMiB, tc.wantConverge, tc.wantUnsafe)
			}
			if got := migrationTimeout(vmi); got != tc.wantTimeout {
				t.Errorf("timeout = %s, want %s", got, tc.wantTimeout)
			}
		})
	}
}
