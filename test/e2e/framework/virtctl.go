package framework

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/test/apiserver"
)

var (
	virtctlOnce sync.Once
	virtctlPath string
	virtctlErr  error
)

// VirtctlBinary builds cmd/virtctl once per test binary, so the tests run the code under test
// whether or not `make build` ran.
func VirtctlBinary() (string, error) {
	virtctlOnce.Do(func() {
		root, err := apiserver.RepoRoot()
		if err != nil {
			virtctlErr = err
			return
		}
		dir, err := os.MkdirTemp("", "vmctl-e2e-virtctl-")
		if err != nil {
			virtctlErr = err
			return
		}
		virtctlPath = filepath.Join(dir, "virtctl")
		cmd := exec.Command("go", "build", "-o", virtctlPath, "./cmd/virtctl")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			virtctlErr = fmt.Errorf("go build ./cmd/virtctl: %v\n%s", err, out)
		}
	})
	return virtctlPath, virtctlErr
}

// Virtctl runs virtctl as the cluster admin in the test's namespace; it returns the
// combined output and the error, so tests can check refusals.
func (f *Framework) Virtctl(args ...string) (string, error) {
	return f.VirtctlAs(f.Kubeconfig, args...)
}

// VirtctlAs runs virtctl with another kubeconfig (a user made by UserKubeconfig).
func (f *Framework) VirtctlAs(kubeconfig string, args ...string) (string, error) {
	f.t.Helper()
	out, err := f.virtctlCommand(kubeconfig, args...).CombinedOutput()
	return string(out), err
}

// virtctlCommand is virtctl with kubeconfig in the test's namespace.
func (f *Framework) virtctlCommand(kubeconfig string, args ...string) *exec.Cmd {
	f.t.Helper()
	bin, err := VirtctlBinary()
	if err != nil {
		f.t.Fatal(err)
	}
	return exec.CommandContext(f.Context(), bin, append([]string{"--kubeconfig", kubeconfig, "-n", f.Namespace}, args...)...)
}

// VirtctlStdout runs virtctl as the cluster admin and returns what it printed on stdout (a
// remote command's output, say), with stderr in the error when it fails.
func (f *Framework) VirtctlStdout(args ...string) (string, error) {
	f.t.Helper()
	var stderr strings.Builder
	cmd := f.virtctlCommand(f.Kubeconfig, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("virtctl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), err
}

// Console is a running `virtctl console`: Output gives what it printed so far, Send types
// into it, Close ends it.
type Console struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	out   bytes.Buffer
}

func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

// Output is everything the console printed so far.
func (c *Console) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// Send types text into the guest's console.
func (c *Console) Send(text string) error {
	_, err := io.WriteString(c.stdin, text)
	return err
}

// Close leaves the console with Ctrl+] and waits for virtctl to exit.
func (c *Console) Close() error {
	_, _ = c.stdin.Write([]byte{0x1d})
	_ = c.stdin.Close()
	return c.cmd.Wait()
}

// StartConsole runs `virtctl console NAME` in the background.
func (f *Framework) StartConsole(name string) *Console {
	f.t.Helper()
	bin, err := VirtctlBinary()
	if err != nil {
		f.t.Fatal(err)
	}
	c := &Console{cmd: exec.CommandContext(f.Context(), bin, "--kubeconfig", f.Kubeconfig, "-n", f.Namespace, "console", name)}
	c.cmd.Stdout, c.cmd.Stderr = c, c
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		f.t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	return c
}

// UserKubeconfig makes a ServiceAccount in the test's namespace bound to the ClusterRole
// role (view, edit, admin) in that namespace only, and returns a kubeconfig file that
// authenticates as it with a short-lived token: a namespace user as a cluster admin would
// set one up.
func (f *Framework) UserKubeconfig(name, role string) string {
	f.t.Helper()
	ctx := f.Context()
	if _, err := f.Kube.CoreV1().ServiceAccounts(f.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("service account %s: %v", name, err)
	}
	_, err := f.Kube.RbacV1().RoleBindings(f.Namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: f.Namespace}},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("bind %s to %s: %v", name, role, err)
	}
	// The authorizer loads the binding a moment later: until then the user is Forbidden.
	if err := apiserver.WaitAllowed(ctx, f.Kube, serviceaccount.MakeUsername(f.Namespace, name), apiserver.ServiceAccountGroups(f.Namespace),
		authorizationv1.ResourceAttributes{Namespace: f.Namespace, Verb: "get", Resource: "pods"}); err != nil {
		f.t.Fatal(err)
	}
	tok, err := f.Kube.CoreV1().ServiceAccounts(f.Namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("token for %s: %v", name, err)
	}
	cluster := clientcmdapi.NewCluster()
	cluster.Server = f.Config.Host
	cluster.CertificateAuthorityData = f.Config.CAData
	if len(cluster.CertificateAuthorityData) == 0 && f.Config.CAFile != "" {
		if cluster.CertificateAuthorityData, err = os.ReadFile(f.Config.CAFile); err != nil {
			f.t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = cluster
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name, Namespace: f.Namespace}
	cfg.CurrentContext = name
	path := filepath.Join(f.t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// KubectlAs runs kubectl with another kubeconfig and returns its output and error.
func (f *Framework) KubectlAs(kubeconfig string, stdin string, args ...string) (string, error) {
	f.t.Helper()
	kubectl, err := apiserver.Tool("kubectl")
	if err != nil {
		f.t.Fatal(err)
	}
	cmd := exec.CommandContext(context.WithoutCancel(f.Context()), kubectl, append([]string{"--kubeconfig", kubeconfig, "-n", f.Namespace}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
