package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// GuestProbe is a KubeVirt probe that goes through the guest agent, run by the kubelet as an
// exec probe of the compute container (`virt-launcher guest-probe`): with no command it pings
// the agent (guestAgentPing), else it runs command in the guest (guest-exec) and passes when
// it exits 0 (exec). Either fails when the agent does not answer within timeout.
func GuestProbe(ctx context.Context, privateDir, domain string, command []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := connectLibvirt(SocketPath(privateDir))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	dom, err := conn.l.DomainLookupByName(domain)
	if err != nil {
		return err
	}
	agent := func(cmd any, reply any) error {
		req, err := json.Marshal(cmd)
		if err != nil {
			return err
		}
		wait := int32(max(1, time.Until(deadline(ctx)).Seconds()))
		out, err := conn.l.QEMUDomainAgentCommand(dom, string(req), wait, 0)
		if err != nil {
			return err
		}
		if len(out) == 0 {
			return errors.New("the guest agent answered nothing")
		}
		return json.Unmarshal([]byte(out[0]), reply)
	}
	if len(command) == 0 {
		var pong struct{ Return *struct{} }
		if err := agent(map[string]string{"execute": "guest-ping"}, &pong); err != nil {
			return fmt.Errorf("guest-ping: %w", err)
		}
		return nil
	}
	return guestExec(ctx, agent, command)
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// guestExec runs command in the guest and waits for it to exit, polling its status.
func guestExec(ctx context.Context, agent func(cmd, reply any) error, command []string) error {
	var started struct {
		Return struct{ PID int }
	}
	exec := map[string]any{"execute": "guest-exec", "arguments": map[string]any{"path": command[0], "arg": command[1:], "capture-output": true}}
	if err := agent(exec, &started); err != nil {
		return fmt.Errorf("guest-exec %q: %w", command, err)
	}
	status := map[string]any{"execute": "guest-exec-status", "arguments": map[string]any{"pid": started.Return.PID}}
	for {
		var st struct {
			Return struct {
				Exited   bool
				ExitCode int `json:"exitcode"`
			}
		}
		if err := agent(status, &st); err != nil {
			return fmt.Errorf("guest-exec-status of %q: %w", command, err)
		}
		if st.Return.Exited {
			if st.Return.ExitCode != 0 {
				return fmt.Errorf("%q exited %d in the guest", command, st.Return.ExitCode)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%q did not exit in time in the guest", command)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
