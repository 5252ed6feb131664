package virtctl

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	gws "github.com/gorilla/websocket"
)

// TestConsoleWaitsForTheInstance: virt-api's 409 (the instance does not run yet) is asked
// again until --timeout; any other refusal, or the timeout, ends the command with it.
func TestConsoleWaitsForTheInstance(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		refusals  int // answers of code before the console opens
		code      int
		wantCalls int32
		wantErr   string
	}{
		{name: "opens after two conflicts", refusals: 2, code: http.StatusConflict, wantCalls: 3},
		{name: "a missing instance ends at once", refusals: 5, code: http.StatusNotFound, wantCalls: 1, wantErr: "not found"},
		{name: "no wait with --timeout 0", args: []string{"--timeout", "0"}, refusals: 5, code: http.StatusConflict, wantCalls: 1, wantErr: "not Scheduled or Running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			upgrader := gws.Upgrader{Subprotocols: []string{consoleProtocol}}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= int32(tc.refusals) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tc.code)
					_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": tc.code,
						"reason": http.StatusText(tc.code), "message": `the instance is "Pending", not Scheduled or Running; not found`})
					return
				}
				c, err := upgrader.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				defer c.Close()
				_ = c.WriteMessage(gws.BinaryMessage, []byte("VMCTL-GUEST-READY\n"))
				_, _, _ = c.ReadMessage()
			}))
			defer srv.Close()
			root := NewRootCommand()
			root.SetArgs(append([]string{"console", "vm1", "--kubeconfig", writeKubeconfig(t, srv.URL)}, tc.args...))
			root.SetOut(io.Discard)
			root.SetIn(&slowReader{[]byte{escapeByte}})
			err := root.Execute()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("%d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}
