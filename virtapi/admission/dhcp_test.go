package admission

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestDHCPOptions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		options v1.DHCPOptions
		want    string // "" accepted
	}{
		{"all of them", v1.DHCPOptions{BootFileName: "pxelinux.0", TFTPServerName: "tftp.example", NTPServers: []string{"10.0.0.1", "10.0.0.2"},
			PrivateOptions: []v1.DHCPPrivateOptions{{Option: 224, Value: "extra"}, {Option: 254, Value: "more"}}}, ""},
		{"ntp by name", v1.DHCPOptions{NTPServers: []string{"pool.ntp.org"}}, "ntpServers[0]: Invalid value: \"pool.ntp.org\": must be an IPv4 address"},
		{"ntp over IPv6", v1.DHCPOptions{NTPServers: []string{"fd00::1"}}, "must be an IPv4 address"},
		{"a public option", v1.DHCPOptions{PrivateOptions: []v1.DHCPPrivateOptions{{Option: 66, Value: "x"}}}, "privateOptions[0].option: Invalid value: 66: must be a private option"},
		{"an option twice", v1.DHCPOptions{PrivateOptions: []v1.DHCPPrivateOptions{{Option: 230, Value: "a"}, {Option: 230, Value: "b"}}}, "privateOptions[1].option: Duplicate value: 230"},
		{"a newline", v1.DHCPOptions{BootFileName: "boot\n"}, "bootFileName: Invalid value: \"boot\\n\": must not contain control characters"},
		{"too long", v1.DHCPOptions{TFTPServerName: strings.Repeat("a", 256)}, "tftpServerName: Too long: may not be more than 255"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := dhcpOptions(field.NewPath("dhcpOptions"), &tt.options).ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("got %v, want %q", got, tt.want)
			}
		})
	}
}
