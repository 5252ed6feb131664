package hooks

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

func TestSidecars(t *testing.T) {
	for _, tc := range []struct {
		name, annotation string
		want             []Sidecar
		err              string
	}{
		{name: "absent"},
		{name: "image", annotation: `[{"args": ["--version", "v1alpha2"], "image": "hook:1"}]`,
			want: []Sidecar{{Image: "hook:1", Args: []string{"--version", "v1alpha2"}}}},
		{name: "configMap", annotation: `[{"image":"shim","configMap": {"name": "cm","key": "s.sh", "hookPath": "/usr/bin/onDefineDomain"}}]`,
			want: []Sidecar{{Image: "shim", ConfigMap: &ConfigMap{Name: "cm", Key: "s.sh", HookPath: "/usr/bin/onDefineDomain"}}}},
		{name: "unknown field", annotation: `[{"image":"x","hostPath":{"path":"/"}}]`, err: `unknown field "hostPath"`},
		{name: "not a list", annotation: `{"image":"x"}`, err: "not a JSON list"},
		{name: "trailing data", annotation: `[] []`, err: "data after the list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ann := map[string]string{}
			if tc.annotation != "" {
				ann[SidecarsAnnotation] = tc.annotation
			}
			got, err := Sidecars(ann)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// TestClientServer runs the protocol over a real unix socket: Info, then OnDefineDomain in
// each version the server offers, and PreCloudInitIso where the version has it.
func TestClientServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "hook.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	info := &Info{Name: "smbios", HookPoints: []*HookPoint{{Name: OnDefineDomain, Priority: -3}}, Versions: []string{"v1alpha1", "v1alpha2"}}
	srv := NewServer(info, Hooks{
		OnDefineDomain: func(_ context.Context, domainXML, vmi []byte) ([]byte, error) {
			return append(append(domainXML, '+'), vmi...), nil
		},
		PreCloudInitIso: func(_ context.Context, data, vmi []byte) ([]byte, error) {
			return append(append(data, '+'), vmi...), nil
		},
	})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	c, err := NewClient(func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info, got, protocmp.Transform()); diff != "" {
		t.Errorf("info: %s", diff)
	}
	if v := Version(got); v != "v1alpha2" {
		t.Errorf("version %q, want v1alpha2", v)
	}
	if p, ok := Subscribes(got, OnDefineDomain); !ok || p != -3 {
		t.Errorf("Subscribes(OnDefineDomain) = %d, %v", p, ok)
	}
	for _, v := range info.Versions {
		out, err := c.OnDefineDomain(ctx, v, []byte("<domain/>"), []byte("{}"))
		if err != nil || string(out) != "<domain/>+{}" {
			t.Errorf("%s: OnDefineDomain = %q, %v", v, out, err)
		}
	}
	if out, err := c.PreCloudInitIso(ctx, "v1alpha2", []byte("{}"), []byte("[]")); err != nil || string(out.Data) != "{}+[]" {
		t.Errorf("PreCloudInitIso = %q, %v", out.Data, err)
	}
	if _, err := c.PreCloudInitIso(ctx, "v1alpha1", nil, nil); err == nil {
		t.Error("v1alpha1, which has no PreCloudInitIso, answered")
	}
	if _, err := c.OnDefineDomain(ctx, "v1alpha3", nil, nil); err == nil {
		t.Error("v1alpha3, which the server does not offer, answered")
	}
}
