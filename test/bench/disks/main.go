// Command bench-disks measures how long a containerDisk takes to boot by its size (make
// bench): the time from creating an instance (its launcher pod follows within milliseconds)
// to the guest's marker on its console, for the test guest's 24 MiB raw disk and for the same
// disk grown to 2 GiB. The launcher serves a containerDisk in place (launcher/containerdisk),
// so the two should be alike; a copy would add the time to read 2 GiB.
//
// The 2 GiB image is made here, not by make images: the bootable disk followed by zeros, which
// the layer compresses but the runtime unpacks in full, as it would real data.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/bench/benchout"
	"github.com/vmctl/vmctl/test/testguest"
)

const bigImage = "vmctl/testguest-disk-2g:bench"

type bench struct {
	kube kubernetes.Interface
	virt versioned.Interface
	ns   string
}

// result is one image's runs.
type result struct {
	Image   string    `json:"image"`
	Size    string    `json:"size"`
	Marker  []float64 `json:"createToMarkerSeconds"`
	Running []float64 `json:"createToRunningSeconds"`
}

func main() {
	runs := pflag.Int("runs", 3, "boots of each image, one at a time")
	kubeconfig := pflag.String("kubeconfig", "_cluster/kubeconfig", "the local cluster's kubeconfig")
	out := pflag.String("out", "_out/bench", "directory for disks.md and disks.json")
	pflag.Parse()
	if err := run(*runs, *kubeconfig, *out); err != nil {
		klog.ErrorS(err, "bench-disks failed")
		os.Exit(1)
	}
}

func run(runs int, kubeconfig, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	b := &bench{kube: kubernetes.NewForConfigOrDie(config), virt: versioned.NewForConfigOrDie(config), ns: "bench-disks"}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tarball := filepath.Join(out, "testguest-disk-2g.tar")
	if err := writeGrownImage(filepath.Join("_out", "images", "testguest-disk.tar"), tarball, bigImage, 2<<30); err != nil {
		return fmt.Errorf("making the 2 GiB image: %w", err)
	}
	if out, err := exec.Command("hack/cluster/load-images.sh", tarball).CombinedOutput(); err != nil {
		return fmt.Errorf("loading %s: %v\n%s", tarball, err, out)
	}
	_ = os.Remove(tarball)
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() { _ = benchout.DeleteNamespace(context.Background(), b.kube, b.ns) }()

	results := []*result{{Image: testguest.DiskImage, Size: "24 MiB"}, {Image: bigImage, Size: "2 GiB"}}
	for i := range runs {
		for _, r := range results { // alternating, so both see the same machine
			running, marker, err := b.boot(ctx, fmt.Sprintf("boot-%d", i), r.Image)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", r.Image, i+1, err)
			}
			klog.InfoS("run", "image", r.Image, "n", i+1, "running", running.Round(time.Millisecond), "marker", marker.Round(time.Millisecond))
			r.Running, r.Marker = append(r.Running, running.Seconds()), append(r.Marker, marker.Seconds())
		}
	}
	table := fmt.Sprintf("\n| containerDisk (test guest, BIOS, TCG; %d runs each, one at a time) | create -> Running, median | create -> guest marker, median / max |\n| --- | --- | --- |\n", runs)
	for _, r := range results {
		table += fmt.Sprintf("| %s (%s) | %.2f s | %.2f s / %.2f s |\n", r.Size, r.Image, median(r.Running), median(r.Marker), slices.Max(r.Marker))
	}
	return benchout.Write(out, "disks", results, table)
}

// boot creates an instance of image, waits for its marker, and deletes it.
func (b *bench) boot(ctx context.Context, name, image string) (running, marker time.Duration, err error) {
	spec := testguest.DiskSpec(resource.MustParse("128Mi"), nil)
	spec.Volumes[0].ContainerDisk.Image = image
	vmis := b.virt.KubevirtV1().VirtualMachineInstances(b.ns)
	start := time.Now()
	if _, err := vmis.Create(ctx, &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	defer func() {
		_ = vmis.Delete(ctx, name, metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			pods, err := b.kube.CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(pods.Items) == 0, nil
		})
	}()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if running == 0 && vmi.Status.Phase == v1.Running {
			running = time.Since(start)
		}
		pods, err := b.kube.CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		logs, err := b.kube.CoreV1().Pods(b.ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "guest-console-log"}).DoRaw(ctx)
		return err == nil && strings.Contains(string(logs), testguest.Marker), nil
	})
	return running, time.Since(start), err
}

func median(s []float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}
