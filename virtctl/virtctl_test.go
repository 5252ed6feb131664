package virtctl

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gws "github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
)

func TestExposeService(t *testing.T) {
	svc, err := exposeOptions{name: "web", serviceType: "NodePort", protocol: "tcp", port: 8080, targetPort: 80}.service("ns", map[string]string{"app": "vm1"})
	if err != nil {
		t.Fatal(err)
	}
	p := svc.Spec.Ports[0]
	if svc.Spec.Type != corev1.ServiceTypeNodePort || p.Port != 8080 || p.TargetPort.IntVal != 80 || p.Protocol != corev1.ProtocolTCP {
		t.Fatalf("service %+v", svc.Spec)
	}
	if svc.Spec.Selector["app"] != "vm1" || svc.Spec.Selector["kubevirt.io"] != "virt-launcher" {
		t.Fatalf("selector %v", svc.Spec.Selector)
	}
	for _, bad := range []exposeOptions{
		{name: "x", serviceType: "ClusterIP", port: 0},
		{name: "x", serviceType: "ExternalName", port: 80},
		{name: "x", serviceType: "ClusterIP", port: 80, targetPort: 70000},
	} {
		if _, err := bad.service("ns", map[string]string{"a": "b"}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// fakeAPI records the PUTs virtctl sends and answers with code.
func fakeAPI(t *testing.T, code int, got *[]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*got = append(*got, r.Method+" "+r.URL.Path+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code != http.StatusAccepted {
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": "Conflict", "message": "VM vm1 is already running"})
		}
	}))
	t.Cleanup(srv.Close)
	return writeKubeconfig(t, srv.URL)
}

// writeKubeconfig is a kubeconfig for the API server at url, namespace ns1.
func writeKubeconfig(t *testing.T, url string) string {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + url + "}}]\n" +
		"contexts: [{name: c, context: {cluster: c, namespace: ns1}}]\ncurrent-context: c\nusers: []\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

func TestStateCommands(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		want    string // the request sent
		wantErr string
	}{
		{args: []string{"start", "vm1"}, code: 202, want: "PUT /apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/start {}"},
		{args: []string{"stop", "vm1", "-n", "other"}, code: 202, want: "PUT /apis/subresources.kubevirt.io/v1/namespaces/other/virtualmachines/vm1/stop {}"},
		{args: []string{"stop", "vm1", "--force", "--grace-period=5"}, code: 202, want: `/stop {"gracePeriod":5}`},
		{args: []string{"restart", "vm1", "--force", "--grace-period=0"}, code: 202, want: `/restart {"gracePeriodSeconds":0}`},
		{args: []string{"start", "vm1", "--dry-run"}, code: 202, want: `/start {"dryRun":["All"]}`},
		{args: []string{"start", "vm1", "--paused"}, code: 202, want: `/start {"paused":true}`},
		{args: []string{"stop", "vm1", "--dry-run", "--force", "--grace-period=0"}, code: 202, want: `/stop {"gracePeriod":0,"dryRun":["All"]}`},
		{args: []string{"migrate", "vm1"}, code: 202, want: "PUT /apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/migrate {}"},
		{args: []string{"migrate", "vm1", "--dry-run", "--addedNodeSelector", "zone=b"}, code: 202, want: `/migrate {"dryRun":["All"],"addedNodeSelector":{"zone":"b"}}`},
		{args: []string{"start", "vm1"}, code: 409, want: "/start", wantErr: "already running"},
		{args: []string{"restart", "vm1", "--grace-period=0"}, wantErr: "needs --force"},
		{args: []string{"stop", "vm1", "--force"}, wantErr: "needs --grace-period"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got []string
			kc := fakeAPI(t, tc.code, &got)
			root := NewRootCommand()
			root.SetArgs(append(tc.args, "--kubeconfig", kc))
			root.SetOut(io.Discard)
			err := root.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
				t.Fatalf("sent %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRelayStopsAtEscape(t *testing.T) {
	var fromClient bytes.Buffer
	upgrader := gws.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.WriteMessage(gws.BinaryMessage, []byte("VMCTL-GUEST-READY\n"))
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			fromClient.Write(data)
		}
	}))
	defer srv.Close()
	conn, _, err := gws.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := io.MultiReader(strings.NewReader("ls\n"), &slowReader{[]byte{escapeByte, 'x'}})
	if err := relay(conn, in, &out); err != nil {
		t.Fatal(err)
	}
	_ = out // the console's output races the escape; what matters is that relay returned
}

// slowReader returns its bytes once, then blocks forever like a terminal.
type slowReader struct{ b []byte }

func (s *slowReader) Read(p []byte) (int, error) {
	if s.b == nil {
		select {}
	}
	n := copy(p, s.b)
	s.b = nil
	return n, nil
}
