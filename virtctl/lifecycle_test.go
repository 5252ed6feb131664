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
)

// answer is what the fake API answers to one "METHOD path".
type answer struct {
	code int
	body any // JSON; nil for none
}

// routedAPI is a kubeconfig for a fake API server answering by "METHOD path" (404 Status for
// anything else); got records "METHOD path body" of each request.
func routedAPI(t *testing.T, routes map[string]answer, got *[]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*got = append(*got, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(body)))
		a, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			a = answer{404, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound", "message": "not found"}}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.code)
		if a.body != nil {
			_ = json.NewEncoder(w).Encode(a.body)
		}
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"contexts: [{name: c, context: {cluster: c, namespace: ns1}}]\ncurrent-context: c\nusers: []\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

const vmiPath = "/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/web/"

func vmObject(strategy string) map[string]any {
	return map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "web", "namespace": "ns1"}, "spec": map[string]any{"runStrategy": strategy}}
}

func TestLifecycleCommands(t *testing.T) {
	ok := answer{code: 200}
	getVM := "GET /apis/kubevirt.io/v1/namespaces/ns1/virtualmachines/web"
	conflict := answer{409, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409, "reason": "Conflict",
		"message": `Operation cannot be fulfilled on virtualmachineinstances.kubevirt.io "web": VMI is already paused`}}
	for _, tc := range []struct {
		name    string
		args    []string
		routes  map[string]answer
		sent    []string // the requests, in order
		out     string   // a part of the output
		wantErr string
	}{
		{name: "pause vmi", args: []string{"pause", "vmi", "web"}, routes: map[string]answer{"PUT " + vmiPath + "pause": ok},
			sent: []string{"PUT " + vmiPath + "pause {}"}, out: "VMI web was scheduled to pause"},
		{name: "kinds are case-insensitive and plural too", args: []string{"pause", "VirtualMachineInstances", "web"},
			routes: map[string]answer{"PUT " + vmiPath + "pause": ok}, sent: []string{"PUT " + vmiPath + "pause {}"}},
		{name: "pause vmi --dry-run", args: []string{"pause", "vmi", "web", "--dry-run"}, routes: map[string]answer{"PUT " + vmiPath + "pause": ok},
			sent: []string{"PUT " + vmiPath + `pause {"dryRun":["All"]}`}, out: "Dry Run execution"},
		{name: "pause vm pauses its instance", args: []string{"pause", "vm", "web"},
			routes: map[string]answer{getVM: {200, vmObject("Always")}, "PUT " + vmiPath + "pause": ok},
			sent:   []string{getVM, "PUT " + vmiPath + "pause {}"}, out: "VMI web was scheduled to pause"},
		{name: "pause a missing vm", args: []string{"pause", "vm", "web"}, sent: []string{getVM}, wantErr: "getting VirtualMachine web"},
		{name: "pause a halted vm", args: []string{"pause", "vm", "web"}, routes: map[string]answer{getVM: {200, vmObject("Halted")}},
			sent: []string{getVM, "PUT " + vmiPath + "pause {}"}, wantErr: "not set to run"},
		{name: "pause a vm whose instance is gone", args: []string{"pause", "vm", "web"}, routes: map[string]answer{getVM: {200, vmObject("Manual")}},
			sent: []string{getVM, "PUT " + vmiPath + "pause {}"}, wantErr: "has no instance running"},
		{name: "pause refused", args: []string{"pause", "vmi", "web"}, routes: map[string]answer{"PUT " + vmiPath + "pause": conflict},
			sent: []string{"PUT " + vmiPath + "pause {}"}, wantErr: "VMI is already paused"},
		{name: "unpause vm", args: []string{"unpause", "vm", "web"},
			routes: map[string]answer{getVM: {200, vmObject("Always")}, "PUT " + vmiPath + "unpause": ok},
			sent:   []string{getVM, "PUT " + vmiPath + "unpause {}"}, out: "VMI web was scheduled to unpause"},
		{name: "pause a pod", args: []string{"pause", "pod", "web"}, wantErr: "unknown resource type"},
		{name: "pause without a kind", args: []string{"pause", "web"}, wantErr: "accepts 2 arg(s)"},
		{name: "soft-reboot", args: []string{"soft-reboot", "web"}, routes: map[string]answer{"PUT " + vmiPath + "softreboot": ok},
			sent: []string{"PUT " + vmiPath + "softreboot"}, out: "VMI web was scheduled to soft-reboot"},
		{name: "soft-reboot refused", args: []string{"soft-reboot", "web"}, routes: map[string]answer{"PUT " + vmiPath + "softreboot": conflict},
			sent: []string{"PUT " + vmiPath + "softreboot"}, wantErr: "soft-reboot VMI web"},
		{name: "soft-reboot takes one name", args: []string{"soft-reboot", "vmi", "web"}, wantErr: "accepts 1 arg(s)"},
		{name: "guestosinfo", args: []string{"guestosinfo", "web"},
			routes: map[string]answer{"GET " + vmiPath + "guestosinfo": {200, map[string]any{"hostname": "web", "os": map[string]any{"id": "debian"}}}},
			sent:   []string{"GET " + vmiPath + "guestosinfo"}, out: "{\n  \"hostname\": \"web\",\n  \"os\": {\n    \"id\": \"debian\"\n  }\n}\n"},
		{name: "userlist", args: []string{"userlist", "web"}, routes: map[string]answer{"GET " + vmiPath + "userlist": {200, map[string]any{"items": []any{}}}},
			sent: []string{"GET " + vmiPath + "userlist"}, out: `"items": []`},
		{name: "fslist", args: []string{"fslist", "web"}, routes: map[string]answer{"GET " + vmiPath + "filesystemlist": {200, map[string]any{"items": []any{}}}},
			sent: []string{"GET " + vmiPath + "filesystemlist"}, out: `"items": []`},
		{name: "guestosinfo without an agent", args: []string{"guestosinfo", "web"}, routes: map[string]answer{"GET " + vmiPath + "guestosinfo": {409,
			map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409, "reason": "Conflict",
				"message": `Operation cannot be fulfilled on virtualmachineinstances.kubevirt.io "web": VMI does not have guest agent connected`}}},
			sent: []string{"GET " + vmiPath + "guestosinfo"}, wantErr: "VMI does not have guest agent connected"},
		{name: "version", args: []string{"version"},
			routes: map[string]answer{"GET /apis/subresources.kubevirt.io/v1/version": {200, map[string]any{"gitVersion": "v9.9.9", "platform": "linux/amd64"}}},
			sent:   []string{"GET /apis/subresources.kubevirt.io/v1/version"}, out: `Server Version: version.Info{GitVersion:"v9.9.9"`},
		{name: "version --client", args: []string{"version", "--client"}, out: "Client Version: version.Info{GitVersion:"},
		{name: "version without virt-api", args: []string{"version"}, sent: []string{"GET /apis/subresources.kubevirt.io/v1/version"},
			out: "Client Version:", wantErr: "the server's version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			kc := routedAPI(t, tc.routes, &got)
			root := NewRootCommand()
			root.SetArgs(append(tc.args, "--kubeconfig", kc))
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(io.Discard)
			err := root.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.sent, "\n") {
				t.Errorf("sent\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.sent, "\n"))
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("output %q, want %q", out.String(), tc.out)
			}
		})
	}
}
