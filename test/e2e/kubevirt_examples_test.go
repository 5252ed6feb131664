//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/kubevirtexamples"
)

// TestKubeVirtExamplesApplyUnderStrictValidation applies each of KubeVirt's examples as a
// user would (kubectl's strict validation, dry run on the server: the CRD schema and the
// admission webhook): the ones this platform can run are accepted, the others refused with the
// missing component named.
func TestKubeVirtExamplesApplyUnderStrictValidation(t *testing.T) {
	f := framework.New(t)
	dir := examplesDir(t)
	for _, file := range kubevirtexamples.Types { // the instance types the VMs name
		path := filepath.Join(dir, file)
		f.Kubectl("apply", "--server-side", "-f", path)
		// cluster-csmall is cluster-scoped: it outlives the namespace unless deleted.
		t.Cleanup(func() { _, _ = f.KubectlAs(f.Kubeconfig, "", "delete", "--ignore-not-found", "-f", path) })
	}
	files := make([]string, 0, len(kubevirtexamples.Outcomes))
	for file := range kubevirtexamples.Outcomes {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		want := kubevirtexamples.Outcomes[file]
		out, err := f.KubectlAs(f.Kubeconfig, "", "apply", "--dry-run=server", "--validate=strict", "-f", filepath.Join(dir, file))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s refused: %s", file, out)
		case want != "" && err == nil:
			t.Errorf("%s accepted; want a refusal naming %q", file, want)
		case want != "" && !refusedFor(out, want):
			t.Errorf("%s refused with %q; want %q", file, out, want)
		}
	}
}

// refusedFor matches kubectl's output against an outcome; the server names an unknown field
// by its whole path where the table has its last element.
func refusedFor(out, want string) bool {
	if name, ok := strings.CutPrefix(want, `unknown field "`); ok {
		return strings.Contains(out, "unknown field") && strings.Contains(out, name)
	}
	return strings.Contains(out, want)
}

// TestKubeVirtExamplesRun runs KubeVirt's examples that need nothing but this cluster, with
// their images swapped for the project's test guest: each instance runs and its guest boots
// (the test guest's marker on the console), whatever devices the example asks for.
func TestKubeVirtExamplesRun(t *testing.T) {
	f := framework.New(t)
	dir := examplesDir(t)
	instances := map[string]string{ // example -> the VMI it runs
		"vmi-fedora.yaml":            "vmi-fedora",            // rng, masquerade, virtio disks
		"vmi-sata.yaml":              "vmi-sata",              // a volume without a disk: a sata disk is added
		"vmi-kernel-boot.yaml":       "vmi-kernel-boot",       // kernel and initrd from an image
		"vmi-masquerade.yaml":        "vmi-masquerade",        // ports, IPv6 network data
		"vmi-nocloud.yaml":           "vmi-nocloud",           // emptyDisk
		"vm-cirros-sata.yaml":        "vm-cirros-sata",        // a Halted VM, started with virtctl
		"vmi-with-sidecar-hook.yaml": "vmi-with-sidecar-hook", // KubeVirt's example hook sidecar
	}
	for file := range instances {
		f.Kubectl("apply", "--validate=strict", "-f", filepath.Join(dir, file))
	}
	if out, err := f.Virtctl("start", "vm-cirros-sata"); err != nil {
		t.Fatalf("virtctl start: %v\n%s", err, out)
	}
	for file, name := range instances {
		vmi := f.WaitVMIPhase(name, v1.Running, 4*time.Minute)
		pod := f.LauncherPod(vmi)
		f.Eventually(3*time.Minute, file+": the guest boots", func(_ context.Context) (bool, error) {
			return strings.Contains(f.Kubectl("logs", pod.Name, "-c", framework.GuestConsoleLog), framework.GuestMarker), nil
		})
	}
}

func examplesDir(t *testing.T) string {
	root, err := apiserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return kubevirtexamples.Dir(root)
}
