package admission

import (
	"net"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// maxDHCPOption is the most bytes a DHCP option carries.
const maxDHCPOption = 255

// dhcpOptions checks an interface's extra DHCP options, which reach the launcher's arguments
// and then the guest's lease: text without control characters that fits an option, NTP
// servers as IPv4 addresses, each private option (224 to 254) once.
func dhcpOptions(path *field.Path, o *v1.DHCPOptions) field.ErrorList {
	if o == nil {
		return nil
	}
	c := &textChecker{}
	fits := func(p *field.Path, s string) {
		if c.ok(p, s) && len(s) > maxDHCPOption {
			c.add(field.TooLong(p, "", maxDHCPOption))
		}
	}
	fits(path.Child("bootFileName"), o.BootFileName)
	fits(path.Child("tftpServerName"), o.TFTPServerName)
	for i, s := range o.NTPServers {
		if net.ParseIP(s).To4() == nil {
			c.add(field.Invalid(path.Child("ntpServers").Index(i), s, "must be an IPv4 address"))
		}
	}
	seen := map[int]bool{}
	for i, p := range o.PrivateOptions {
		pp := path.Child("privateOptions").Index(i)
		switch {
		case p.Option < 224 || p.Option > 254:
			c.add(field.Invalid(pp.Child("option"), p.Option, "must be a private option, from 224 to 254"))
		case seen[p.Option]:
			c.add(field.Duplicate(pp.Child("option"), p.Option))
		}
		seen[p.Option] = true
		fits(pp.Child("value"), p.Value)
	}
	return c.errs
}
