package virtctl

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want target
		err  bool
	}{
		{arg: "vm/web", want: target{resource: "virtualmachines", name: "web"}},
		{arg: "vmi/web", want: target{resource: "virtualmachineinstances", name: "web"}},
		{arg: "VirtualMachineInstances/web", want: target{resource: "virtualmachineinstances", name: "web"}},
		{arg: "vms/web/prod", want: target{resource: "virtualmachines", name: "web", namespace: "prod"}},
		{arg: "vmi/web.prod", want: target{resource: "virtualmachineinstances", name: "web", namespace: "prod"}},
		{arg: "web", err: true},
		{arg: "pod/web", err: true},
		{arg: "vm/", err: true},
		{arg: "vm/web/", err: true},
		{arg: "vm/web.", err: true},
		{arg: "vm/.prod", err: true},
		{arg: "vm/a/b/c", err: true},
	} {
		got, err := parseTarget(tc.arg)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v, error %v", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

func TestParsePort(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want forwardedPort
		err  bool
	}{
		{arg: "80", want: forwardedPort{80, 80, "tcp"}},
		{arg: "8080:80", want: forwardedPort{8080, 80, "tcp"}},
		{arg: ":22", want: forwardedPort{0, 22, "tcp"}},
		{arg: "0:22", want: forwardedPort{0, 22, "tcp"}},
		{arg: "udp/5353:53", want: forwardedPort{5353, 53, "udp"}},
		{arg: "TCP/3389", want: forwardedPort{3389, 3389, "tcp"}},
		{arg: "0", err: true},
		{arg: "8080:0", err: true},
		{arg: "70000", err: true},
		{arg: "8080:70000", err: true},
		{arg: "-1:80", err: true},
		{arg: "http", err: true},
		{arg: "sctp/80", err: true},
		{arg: "", err: true},
		{arg: ":", err: true},
	} {
		got, err := parsePort(tc.arg)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("%q: %+v, %v; want %+v, error %v", tc.arg, got, err, tc.want, tc.err)
		}
	}
}

func TestPortForwardArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // part of the error
	}{
		{args: []string{"port-forward", "vmi/web"}, want: "requires at least 2 arg(s)"},
		{args: []string{"port-forward", "pod/web", "80"}, want: "unsupported type"},
		{args: []string{"port-forward", "vmi/web", "80:0"}, want: "remote port"},
		{args: []string{"port-forward", "--stdio", "vmi/web", "80", "81"}, want: "exactly one port"},
	} {
		root := NewRootCommand()
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
