package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeAgent answers guest-exec with pid 7 and guest-exec-status with the statuses in turn
// (the last one again once they run out).
func fakeAgent(execErr error, statuses ...string) func(cmd, reply any) error {
	return func(cmd, reply any) error {
		req, _ := json.Marshal(cmd)
		switch {
		case strings.Contains(string(req), `"guest-exec"`):
			if execErr != nil {
				return execErr
			}
			return json.Unmarshal([]byte(`{"return":{"pid":7}}`), reply)
		case strings.Contains(string(req), `"pid":7`):
			st := statuses[0]
			if len(statuses) > 1 {
				statuses = statuses[1:]
			}
			return json.Unmarshal([]byte(st), reply)
		}
		return errors.New("unexpected " + string(req))
	}
}

func TestGuestExec(t *testing.T) {
	running, exited0, exited1 := `{"return":{"exited":false}}`, `{"return":{"exited":true,"exitcode":0}}`, `{"return":{"exited":true,"exitcode":1}}`
	for _, tc := range []struct {
		name  string
		agent func(cmd, reply any) error
		want  string // a part of the error; "" passes
	}{
		{"exits 0", fakeAgent(nil, exited0), ""},
		{"exits 0 after a while", fakeAgent(nil, running, running, exited0), ""},
		{"exits 1", fakeAgent(nil, exited1), "exited 1"},
		{"never exits", fakeAgent(nil, running), "did not exit in time"},
		{"cannot start", fakeAgent(errors.New("Guest agent is not responding")), "not responding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := guestExec(ctx, tc.agent, []string{"cat", "/tmp/healthy"})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("guestExec = %v, want %q", err, tc.want)
			}
		})
	}
}
