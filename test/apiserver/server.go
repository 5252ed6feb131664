package apiserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
)

// Server is a running etcd + kube-apiserver pair, all state in one directory.
type Server struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Kubeconfig is a kubeconfig file with the same credentials, for kubectl.
	Kubeconfig string

	dir   string
	procs []*exec.Cmd
}

// Start runs etcd and kube-apiserver with their state under dir and waits until the API
// server is ready. Stop must be called even when Start fails part-way.
func Start(dir string) (*Server, error) {
	s := &Server{dir: dir}
	etcdURL, err := s.startEtcd()
	if err != nil {
		return s, err
	}
	if err := s.startAPIServer(etcdURL); err != nil {
		return s, err
	}
	return s, s.waitReady(90 * time.Second)
}

// Stop ends every process Start began, apiserver first.
func (s *Server) Stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	s.procs = nil
}

// LogTail returns the end of a component's log, for failure messages.
func (s *Server) LogTail(component string) string {
	data, _ := os.ReadFile(filepath.Join(s.dir, component+".log"))
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

func (s *Server) startEtcd() (string, error) {
	client, peer := freePort(), freePort()
	clientURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	err := s.run("etcd",
		"--data-dir="+filepath.Join(s.dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn")
	return clientURL, err
}

func (s *Server) startAPIServer(etcdURL string) error {
	token, err := randomToken()
	if err != nil {
		return err
	}
	tokens := filepath.Join(s.dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	saKey, saPub := filepath.Join(s.dir, "sa.key"), filepath.Join(s.dir, "sa.pub")
	if err := writeServiceAccountKeys(saKey, saPub); err != nil {
		return err
	}
	servingCert, servingKey := filepath.Join(s.dir, "serving.crt"), filepath.Join(s.dir, "serving.key")
	if err := writeServingCert(servingCert, servingKey); err != nil {
		return err
	}
	port := freePort()
	if err := s.run("kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+servingCert, "--tls-private-key-file="+servingKey,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saPub, "--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
	); err != nil {
		return err
	}
	s.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: servingCert},
		QPS:             100, Burst: 200,
	}
	s.Kubeconfig = filepath.Join(s.dir, "kubeconfig")
	return writeKubeconfig(s.Kubeconfig, s.Config)
}

// run starts a tool in the background with its output in <dir>/<name>.log.
func (s *Server) run(name string, args ...string) error {
	path, err := Tool(name)
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	s.procs = append(s.procs, cmd)
	return nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver not ready after %s: %v\n%s", timeout, last, s.LogTail("kube-apiserver"))
	}
	return nil
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	return clientcmd.WriteToFile(*kc, path)
}

func writeServiceAccountKeys(keyPath, pubPath string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(pubPath, pubPEM, 0o644)
}

// writeServingCert writes a self-signed certificate for 127.0.0.1 that clients also trust as CA.
func writeServingCert(certPath, keyPath string) error {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(certPath, certPEM, 0o644)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// freePort asks the kernel for an unused port. Another process could take it before the
// server binds it; on a test machine that race is rare enough.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
