//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestTheGuestReadsDownwardMetrics: KubeVirt's downward metrics (virt-api's DownwardMetrics
// gate, on in the local cluster), both ways a guest reads them. On the virtio-serial port
// org.github.vhostmd.1 the guest asks and gets vhostmd's XML, naming the node it runs on and
// its own vCPUs; the downwardMetrics volume is a disk with the same document, rewritten while
// the guest runs (its Time advances). After a live migration both name the new node.
func TestTheGuestReadsDownwardMetrics(t *testing.T) {
	f := framework.New(t)
	f.RealNodes(2)
	spec := framework.TestGuestSpec("metrics")
	spec.Domain.Devices.DownwardMetrics = &v1.DownwardMetrics{}
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks,
		v1.Disk{Name: "metrics", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "metrics",
		VolumeSource: v1.VolumeSource{DownwardMetrics: &v1.DownwardMetricsVolumeSource{}}})
	f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "metrics"}, Spec: spec})
	before := f.WaitVMIPhase("metrics", v1.Running, bootTimeout)

	port := readMetrics(t, f, before, "port")
	t.Logf("the guest read on its port:\n%s", port)
	if got := metric(port, "ResourceProcessorLimit"); got != "1" {
		t.Errorf("the port says ResourceProcessorLimit %q, want 1 vCPU:\n%s", got, port)
	}
	disk := readMetrics(t, f, before, "disk")
	if !strings.HasPrefix(disk, fmt.Sprintf("length %d\n", len(disk)-len(strings.SplitN(disk, "\n", 2)[0])-1)) {
		t.Errorf("the disk's header does not give its document's length:\n%s", disk)
	}
	first := metric(disk, "Time")
	f.Eventually(time.Minute, "the metrics disk to be rewritten", func(ctx context.Context) (bool, error) {
		return metric(readMetrics(t, f, before, "disk"), "Time") != first, nil
	})

	after := migrate(t, f, "move-metrics", "metrics")
	t.Logf("after the migration the disk says:\n%s", readMetrics(t, f, after, "disk"))
	readMetrics(t, f, after, "port")
}

// readMetrics has the guest read its downward metrics from its port or its disk until they
// name the node the instance runs on.
func readMetrics(t *testing.T, f *framework.Framework, vmi *v1.VirtualMachineInstance, from string) string {
	t.Helper()
	var doc string
	f.Eventually(2*time.Minute, "the guest to read metrics naming "+vmi.Status.NodeName+" from its "+from, func(ctx context.Context) (bool, error) {
		fresh, err := f.Virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil || len(fresh.Status.Interfaces) == 0 {
			return false, fmt.Errorf("no address yet: %v", err)
		}
		doc, err = getWithin(ctx, "http://"+fresh.Status.Interfaces[0].IP+"/cgi-bin/metrics?"+from, 20*time.Second)
		if err != nil {
			return false, err
		}
		if got := metric(doc, "HostName"); got != vmi.Status.NodeName {
			return false, fmt.Errorf("HostName %q in %q", got, doc)
		}
		return true, nil
	})
	return doc
}

// metric is the value of the named metric in a vhostmd document.
func metric(doc, name string) string {
	m := regexp.MustCompile(`<name>` + name + `</name>\s*<value>([^<]*)</value>`).FindStringSubmatch(doc)
	if m == nil {
		return ""
	}
	return m[1]
}
