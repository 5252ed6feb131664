package vmctl

import (
	"errors"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		podNamespace string
		want         Options
		wantErr      bool
	}{
		{name: "defaults outside a pod", args: []string{"testvm"},
			want: Options{Prototype: "testvm", Namespace: "default", ProtoNamespace: "default"}},
		{name: "defaults to the pod's namespace", args: []string{"testvm"}, podNamespace: "apps",
			want: Options{Prototype: "testvm", Namespace: "apps", ProtoNamespace: "apps"}},
		{name: "proto namespace follows namespace", args: []string{"--namespace=apps", "testvm"}, podNamespace: "other",
			want: Options{Prototype: "testvm", Namespace: "apps", ProtoNamespace: "apps"}},
		{name: "all flags", args: []string{"--namespace=apps", "--proto-namespace=protos", "--hostname-override=pod-1", "--kubeconfig=/k", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "apps", ProtoNamespace: "protos", HostnameOverride: "pod-1", Kubeconfig: "/k"}},
		{name: "no prototype", args: nil, wantErr: true},
		{name: "empty prototype", args: []string{""}, wantErr: true},
		{name: "two prototypes", args: []string{"a", "b"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fs := pflag.NewFlagSet("vmctl", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(fs.Args())
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrUsage) {
					t.Errorf("error %v is not a usage error", err)
				}
				return
			}
			o.defaultNamespaces(tt.podNamespace)
			// Flags whose defaults are not under test.
			tt.want.PodinfoDir, tt.want.HealthAddr, tt.want.PrototypeBackoffMax = o.PodinfoDir, o.HealthAddr, o.PrototypeBackoffMax
			if o != tt.want {
				t.Errorf("options = %+v, want %+v", o, tt.want)
			}
		})
	}
}
