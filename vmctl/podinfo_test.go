package vmctl

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLookupPod(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "name"), []byte("file-pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "namespace"), []byte("file-ns"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    Options
		env     map[string]string
		want    PodIdentity
		wantErr bool
	}{
		{name: "env", opts: Options{PodinfoDir: dir}, env: map[string]string{PodNameEnv: "env-pod", PodNamespaceEnv: "env-ns"},
			want: PodIdentity{Name: "env-pod", Namespace: "env-ns"}},
		{name: "downward API files", opts: Options{PodinfoDir: dir}, want: PodIdentity{Name: "file-pod", Namespace: "file-ns"}},
		{name: "env and files mixed", opts: Options{PodinfoDir: dir}, env: map[string]string{PodNameEnv: "env-pod"},
			want: PodIdentity{Name: "env-pod", Namespace: "file-ns"}},
		{name: "hostname override wins", opts: Options{PodinfoDir: dir, HostnameOverride: "over"}, env: map[string]string{PodNameEnv: "env-pod"},
			want: PodIdentity{Name: "over", Namespace: "file-ns"}},
		{name: "override outside a pod", opts: Options{PodinfoDir: t.TempDir(), HostnameOverride: "over"}, want: PodIdentity{Name: "over"}},
		{name: "nothing", opts: Options{PodinfoDir: filepath.Join(dir, "missing")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookupPod(&tt.opts, func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
