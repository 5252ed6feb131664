package vmctl

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Options
		wantErr bool
	}{
		{name: "defaults", args: []string{"testvm"}, want: Options{Prototype: "testvm", Namespace: "default", ProtoNamespace: "default"}},
		{name: "proto namespace follows namespace", args: []string{"--namespace=apps", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "apps", ProtoNamespace: "apps"}},
		{name: "all flags", args: []string{"--namespace=apps", "--proto-namespace=protos", "--hostname-override=pod-1", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "apps", ProtoNamespace: "protos", HostnameOverride: "pod-1"}},
		{name: "no prototype", args: nil, wantErr: true},
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
			if err == nil && o != tt.want {
				t.Errorf("options = %+v, want %+v", o, tt.want)
			}
		})
	}
}
