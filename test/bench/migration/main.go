// Command bench-migration measures live migration of the test guest between the local
// cluster's two real nodes (make bench): per run, the time from creating the
// VirtualMachineInstanceMigration to its Succeeded (what a virtctl migrate user waits), next to
// libvirt's own account of the copy (its floor: what libvirt and QEMU take to move the memory)
// and of the guest's pause, read from the target handler's MigrationReceived event, and the
// longest pause a client polling the guest's Service every 20 ms saw. Runs move the guest back
// and forth, one at a time.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
	"github.com/vmctl/vmctl/test/testguest"
)

const (
	namespace = "bench-migration"
	name      = "mover"
	memory    = "128Mi" // the test guest's usual size
)

// run is one migration's numbers.
type run struct {
	From, To        string
	EndToEnd        float64 `json:"createToSucceededSeconds"`
	LibvirtElapsed  float64 `json:"libvirtElapsedSeconds"`
	LibvirtDowntime float64 `json:"libvirtDowntimeSeconds"`
	ClientPause     float64 `json:"clientLongestPauseSeconds"`
	MiBSent         float64 `json:"mibSent"`
	// NoLibvirtAccount: the target's handler recorded no MigrationReceived event (the libvirt
	// columns are 0 then).
	NoLibvirtAccount bool `json:"noLibvirtAccount,omitempty"`
}

type bench struct {
	kube kubernetes.Interface
	virt versioned.Interface
}

func main() {
	runs := pflag.Int("runs", 3, "migrations, one at a time, alternating direction")
	kubeconfig := pflag.String("kubeconfig", "_cluster/kubeconfig", "the local cluster's kubeconfig")
	out := pflag.String("out", "_out/bench", "directory for migration.md and migration.json")
	pflag.Parse()
	if err := measure(*runs, *kubeconfig, *out); err != nil {
		klog.ErrorS(err, "bench-migration failed")
		os.Exit(1)
	}
}

func measure(runs int, kubeconfig, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	b := &bench{kube: kubernetes.NewForConfigOrDie(config), virt: versioned.NewForConfigOrDie(config)}
	nodes, err := b.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type!=kwok"})
	if err != nil {
		return err
	}
	if len(nodes.Items) < 2 {
		return fmt.Errorf("%d real nodes: live migration needs two (make cluster-up REAL_NODES=2)", len(nodes.Items))
	}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() { _ = benchout.DeleteNamespace(context.Background(), b.kube, namespace) }()
	url, err := b.startGuest(ctx)
	if err != nil {
		return err
	}
	var results []run
	for i := range runs {
		r, err := b.migrate(ctx, i, url)
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		klog.InfoS("migrated", "n", i+1, "from", r.From, "to", r.To, "endToEnd", r.EndToEnd, "libvirt", r.LibvirtElapsed,
			"downtime", r.LibvirtDowntime, "clientPause", r.ClientPause, "MiB", r.MiBSent)
		results = append(results, r)
	}
	return benchout.Write(out, "migration", results, table(results))
}

// startGuest runs the test guest behind a Service and returns the Service's URL once it answers.
func (b *bench) startGuest(ctx context.Context) (string, error) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: testguest.Spec(name, resource.MustParse(memory))}
	if _, err := b.virt.KubevirtV1().VirtualMachineInstances(namespace).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": name},
		Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}},
	}}
	svc, err := b.kube.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	url := "http://" + svc.Spec.ClusterIP + "/"
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return answers(ctx, url, time.Second), nil
	})
	if err != nil {
		return "", fmt.Errorf("the guest never answered at %s: %w", url, err)
	}
	return url, nil
}

// migrate moves the guest once, polling its Service meanwhile.
func (b *bench) migrate(ctx context.Context, i int, url string) (run, error) {
	vmi, err := b.virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return run{}, err
	}
	stop := make(chan struct{})
	pause := make(chan time.Duration, 1)
	go func() { pause <- longestPause(ctx, url, stop) }()
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("move-%d", i)},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: name}}
	start := time.Now()
	if _, err := b.virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Create(ctx, m, metav1.CreateOptions{}); err != nil {
		close(stop)
		return run{}, err
	}
	var endToEnd time.Duration
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := b.virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if got.Status.Phase == v1.MigrationFailed {
			return false, fmt.Errorf("failed: %+v", got.Status.MigrationState)
		}
		endToEnd = time.Since(start)
		return got.Status.Phase == v1.MigrationSucceeded, nil
	})
	time.Sleep(2 * time.Second) // the Service drops the source pod's endpoint once it ended
	close(stop)
	if err != nil {
		return run{}, err
	}
	r := run{From: vmi.Status.NodeName, EndToEnd: endToEnd.Seconds(), ClientPause: (<-pause).Seconds()}
	moved, err := b.virt.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return run{}, err
	}
	r.To = moved.Status.NodeName
	return r, b.readArrival(ctx, vmi.UID, start, i, &r)
}

// arrival is the target handler's MigrationReceived event (handler.MigrationReceivedFormat).
var arrival = regexp.MustCompile(`^Received from node (\S+) in ([0-9.]+) s; the guest was paused ([0-9]+) ms; ([0-9.]+) MiB sent$`)

// readArrival reads the numbers of the MigrationReceived event of the migration started at
// start; a run without one is marked, not failed.
func (b *bench) readArrival(ctx context.Context, uid types.UID, start time.Time, n int, r *run) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := b.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fmt.Sprintf("involvedObject.uid=%s,reason=MigrationReceived", uid)})
		if err != nil {
			return false, nil
		}
		// Timestamps have whole seconds; runs are seconds apart.
		i := slices.IndexFunc(events.Items, func(e corev1.Event) bool { return !e.CreationTimestamp.Time.Before(start.Truncate(time.Second)) })
		if i < 0 {
			return false, nil
		}
		match := arrival.FindStringSubmatch(events.Items[i].Message)
		if match == nil {
			return false, errors.New("unexpected MigrationReceived event: " + events.Items[i].Message)
		}
		elapsed, _ := strconv.ParseFloat(match[2], 64)
		downtime, _ := strconv.ParseFloat(match[3], 64)
		mib, _ := strconv.ParseFloat(match[4], 64)
		r.LibvirtElapsed, r.LibvirtDowntime, r.MiBSent = elapsed, downtime/1000, mib
		return true, nil
	})
	if wait.Interrupted(err) {
		klog.InfoS("no MigrationReceived event: libvirt's account of this run is missing", "n", n+1)
		r.NoLibvirtAccount = true
		return nil
	}
	return err
}
