package sidecarshim

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmctl/vmctl/pkg/hooks"
)

func TestRunHook(t *testing.T) {
	for _, tc := range []struct {
		name, script, want, err string
	}{
		{name: "the domain on stdout", script: "#!/bin/sh\n[ \"$1\" = --vmi ] && [ \"$3\" = --domain ] && echo \"$4\" | sed s/a/b/\n", want: "<b/>\n"},
		{name: "a failure says why", script: "#!/bin/sh\necho 'no such element' >&2\nexit 3\n", err: "exit status 3: no such element"},
		{name: "nothing written", script: "#!/bin/sh\nexit 0\n", err: "wrote nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := filepath.Join(t.TempDir(), "onDefineDomain")
			if err := os.WriteFile(hook, []byte(tc.script), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := runHook(context.Background(), hook, "--vmi", "{}", "--domain", "<a/>")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Errorf("got %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}

// TestRunServesTheHookInPath: the shim finds onDefineDomain and preCloudInitIso in $PATH, as
// KubeVirt's does, subscribes to their hook points only then, and runs them for each call.
func TestRunServesTheHookInPath(t *testing.T) {
	for _, withHook := range []bool{true, false} {
		t.Run(map[bool]string{true: "a hook", false: "no hook"}[withHook], func(t *testing.T) {
			bin, sockets := t.TempDir(), t.TempDir()
			if withHook {
				script := "#!/bin/sh\necho \"$4\" | sed s/a/b/\n"
				for _, name := range []string{"onDefineDomain", "preCloudInitIso"} {
					if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			t.Setenv("PATH", bin+":/usr/bin:/bin")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Run(ctx, Options{Version: "v1alpha3", SocketsDir: sockets}) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			info, client := dialShim(t, sockets)
			for _, point := range []string{hooks.OnDefineDomain, hooks.PreCloudInitIso} {
				if _, ok := hooks.Subscribes(info, point); ok != withHook {
					t.Fatalf("subscribes to %s: %v, want %v (%+v)", point, ok, withHook, info)
				}
			}
			if !withHook {
				return
			}
			out, err := client.OnDefineDomain(ctx, hooks.Version(info), []byte("<a/>"), []byte("{}"))
			if err != nil || string(out) != "<b/>\n" {
				t.Errorf("OnDefineDomain: %q, %v; want %q", out, err, "<b/>\n")
			}
			got, err := client.PreCloudInitIso(ctx, hooks.Version(info), []byte(`["a"]`), []byte("{}"))
			if want := `["b"]` + "\n"; err != nil || string(got.Data) != want {
				t.Errorf("PreCloudInitIso: %q, %v; want %q", got.Data, err, want)
			}
		})
	}
}

// dialShim waits (bounded) for the shim's socket and asks it for its Info.
func dialShim(t *testing.T, dir string) (*hooks.Info, *hooks.Client) {
	t.Helper()
	for range 100 {
		socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
		if len(socks) == 1 {
			client, err := hooks.NewClient(func(ctx context.Context) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", socks[0])
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Close() })
			info, err := client.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return info, client
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the shim made no socket in 2 s")
	return nil, nil
}
