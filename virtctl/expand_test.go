package virtctl

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpand: what virtctl expand asks of the API and prints.
func TestExpand(t *testing.T) {
	const expanded = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm1"},"spec":{"template":{"spec":{"domain":{"memory":{"guest":"1Gi"}}}}}}`
	file := filepath.Join(t.TempDir(), "vm.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\nspec:\n  instancetype:\n    name: small\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		sent    string
		printed string
		wantErr string
	}{
		{args: []string{"expand", "--vm", "vm1"}, sent: "GET /apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/expand-spec ",
			printed: "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"},
		{args: []string{"expand", "--file", file, "-o", "json"}, sent: `PUT /apis/subresources.kubevirt.io/v1/namespaces/ns1/expand-vm-spec {"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm1"},"spec":{"instancetype":{"name":"small"}}}`,
			printed: "{\n  \"apiVersion\": \"kubevirt.io/v1\",\n"},
		{args: []string{"expand"}, wantErr: "exactly one of --vm and --file"},
		{args: []string{"expand", "--vm", "a", "--file", file}, wantErr: "exactly one"},
		{args: []string{"expand", "--vm", "a", "-o", "table"}, wantErr: "want yaml or json"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var sent []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				sent = append(sent, r.Method+" "+r.URL.Path+" "+string(body))
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(expanded))
			}))
			defer srv.Close()
			root := NewRootCommand()
			var out bytes.Buffer
			root.SetArgs(append(tc.args, "--kubeconfig", writeKubeconfig(t, srv.URL)))
			root.SetOut(&out)
			err := root.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || len(sent) != 0 {
					t.Fatalf("error %v, sent %q; want %q and nothing sent", err, sent, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sent) != 1 || sent[0] != tc.sent {
				t.Errorf("sent %q, want %q", sent, tc.sent)
			}
			if !strings.HasPrefix(out.String(), tc.printed) || !strings.Contains(out.String(), "1Gi") {
				t.Errorf("printed %q", out.String())
			}
		})
	}
}
