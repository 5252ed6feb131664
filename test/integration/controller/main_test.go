// Package controller runs the project's controllers in-process against a real kube-apiserver,
// etcd and kube-controller-manager (garbage collector and namespace controller), with a node
// double standing in for scheduler, kubelet and virt-handler.
package controller

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/nodedouble"
)

// nodeName is the one node of the test cluster, played by the node double.
const nodeName = "node-double"

var (
	server *apiserver.Server
	kube   kubernetes.Interface
	virt   versioned.Interface
	node   *nodedouble.Double
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	raiseParallel()
	start := time.Now()
	env, stop, err := apiserver.Setup(true)
	defer stop()
	server, kube, virt = env.Server, env.Kube, env.Virt
	ready := time.Since(start)
	if err == nil {
		node, err = newNodeDouble()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	background := func(name string, run func(context.Context) error) {
		wg.Go(func() {
			if err := run(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "%s stopped: %v\n", name, err)
			}
		})
	}
	background("node double", node.Run)
	if err := startControllers(); err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		cancel()
		wg.Wait()
		return 1
	}
	fmt.Fprintf(os.Stderr, "integration setup: kube-apiserver, CRDs and kube-controller-manager ready in %s\n", ready.Round(time.Millisecond))
	code := m.Run()
	stopControllers()
	cancel()
	wg.Wait()
	return code
}

// newNamespace gives each test a namespace of its own, deleted (by the namespace controller,
// which waits for the controllers to release the instances) when the test ends.
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
	// No pod is admitted before the service account controller made the default ServiceAccount.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := apiserver.WaitDefaultServiceAccount(ctx, kube, ns.Name); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// eventually polls condition every 100ms until it returns true, failing the test with what was
// awaited, the last error and the last state described after timeout. An error from condition
// is remembered and reported, not fatal.
func eventually(t *testing.T, timeout time.Duration, what string, condition func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	start := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, err := condition(ctx)
		if ctx.Err() == nil {
			// Not the error of a call the deadline cut short.
			last = err
		}
		return err == nil && done, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}

// consistently polls condition for the whole duration, failing the test the first time it
// returns false or an error. Each call gets a deadline of its own, not the window's end: a
// client that is rate limited near the end of the window must not count as a failure.
func consistently(t *testing.T, duration time.Duration, what string, condition func(ctx context.Context) (bool, error)) {
	t.Helper()
	end := time.Now().Add(duration)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		ok, err := condition(ctx)
		cancel()
		if err != nil || !ok {
			t.Fatalf("expected %s to hold for %s; it did not after %s (error: %v)", what, duration,
				(duration - time.Until(end)).Round(time.Millisecond), err)
		}
		if time.Now().After(end) {
			return
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// newNodeDouble registers the node double's node. The double has clients of its own, as
// kubelet and virt-handler would: the tests' polling does not eat into its rate limit.
func newNodeDouble() (*nodedouble.Double, error) {
	kubeClient, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		return nil, err
	}
	virtClient, err := versioned.NewForConfig(server.Config)
	if err != nil {
		return nil, err
	}
	d := nodedouble.New(kubeClient, virtClient, nodeName)
	return d, d.RegisterNode(context.Background())
}

// defaultParallel replaces -test.parallel's default (GOMAXPROCS, 2 on small machines): the
// parallel tests here mostly wait on the API server and the controllers, not on a CPU.
const defaultParallel = 12

// raiseParallel applies defaultParallel unless -test.parallel was given explicitly.
func raiseParallel() {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", fmt.Sprint(defaultParallel))
	}
}
