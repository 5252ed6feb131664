package vmctl

import (
	"errors"
	"reflect"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vmctl/vmctl/vmctl/forward"
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
		{name: "forwarded ports", args: []string{"--forward=8000:80,2222:22", "--forward=53/udp", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "default", ProtoNamespace: "default",
				Forward: forward.Ports{{Listen: 8000, Target: 80, Protocol: forward.TCP}, {Listen: 2222, Target: 22, Protocol: forward.TCP}, {Listen: 53, Target: 53, Protocol: forward.UDP}}}},
		{name: "UDP on the health port", args: []string{"--forward=8080/udp", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "default", ProtoNamespace: "default", Forward: forward.Ports{{Listen: 8080, Target: 8080, Protocol: forward.UDP}}}},
		{name: "forwarding the health port", args: []string{"--forward=8080:80", "testvm"}, wantErr: true},
		{name: "forwarding a moved health port", args: []string{"--health-addr=:9090", "--forward=9090", "testvm"}, wantErr: true},
		{name: "pod volumes", args: []string{"--pod-volume=data=data,logs=scratch", "--allow-shared-volumes", "testvm"},
			want: Options{Prototype: "testvm", Namespace: "default", ProtoNamespace: "default",
				PodVolumes: map[string]string{"data": "data", "logs": "scratch"}, AllowSharedVolumes: true}},
		{name: "a pod volume without its name", args: []string{"--pod-volume=data=", "testvm"}, wantErr: true},
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
			if !reflect.DeepEqual(o, tt.want) {
				t.Errorf("options = %+v, want %+v", o, tt.want)
			}
		})
	}
}
