// Package api proves the CRDs and generated clients against a real kube-apiserver and etcd.
package api

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
)

var (
	server *apiserver.Server
	kube   kubernetes.Interface
	virt   versioned.Interface
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, stop, err := apiserver.Setup(false)
	defer stop()
	server, kube, virt = env.Server, env.Kube, env.Virt
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}
	return m.Run()
}

// newNamespace gives each test a namespace of its own, deleted when the test ends.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// kubectl runs the pinned kubectl against the test server and returns its combined output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	path, err := apiserver.Tool("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, append([]string{"--kubeconfig", server.Kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}
