package permissions

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestHostPathsCreateNothingOnTheNode: every hostPath the install mounts has a type the kubelet
// checks (Directory, CharDevice...), never one under which the kubelet or the runtime creates a
// missing path on the node ("" or ...OrCreate): a hostPath of /dev/kvm once left a directory
// there on a node without KVM, where the device node belongs.
func TestHostPathsCreateNothingOnTheNode(t *testing.T) {
	objs, err := renderManifests(func(kind string) bool { return kind == "DaemonSet" || kind == "Deployment" })
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("the manifests render no workload")
	}
	for _, obj := range objs {
		var name string
		var spec corev1.PodSpec
		switch o := obj.(type) {
		case *appsv1.DaemonSet:
			name, spec = "DaemonSet "+o.Name, o.Spec.Template.Spec
		case *appsv1.Deployment:
			name, spec = "Deployment "+o.Name, o.Spec.Template.Spec
		}
		for _, v := range spec.Volumes {
			if v.HostPath == nil {
				continue
			}
			switch typ := ptr.Deref(v.HostPath.Type, corev1.HostPathUnset); typ {
			case corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathFileOrCreate:
				t.Errorf("%s: volume %s (hostPath %s) has type %q, which creates the path on a node that lacks it", name, v.Name, v.HostPath.Path, typ)
			}
		}
	}
}
