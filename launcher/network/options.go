package network

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Options are an interface's dhcpOptions (KubeVirt's): extra options in every lease the
// guest gets.
type Options struct {
	BootFileName   string           // option 67
	TFTPServerName string           // option 66
	NTPServers     []net.IP         // option 42
	Private        map[uint8]string // options 224 to 254
}

// ParseOptions reads the launcher's --dhcp-* flags: NTP servers are IPv4 addresses, private
// options CODE=VALUE with CODE from 224 to 254. Every value fits an option (255 bytes).
func ParseOptions(bootFile, tftpServer string, ntpServers, private []string) (Options, error) {
	o := Options{BootFileName: bootFile, TFTPServerName: tftpServer}
	for _, v := range []string{bootFile, tftpServer} {
		if len(v) > 255 {
			return o, fmt.Errorf("DHCP option value of %d bytes: at most 255 fit", len(v))
		}
	}
	for _, s := range ntpServers {
		ip := net.ParseIP(s).To4()
		if ip == nil {
			return o, fmt.Errorf("--dhcp-ntp-server %q: not an IPv4 address", s)
		}
		o.NTPServers = append(o.NTPServers, ip)
	}
	for _, s := range private {
		code, value, ok := strings.Cut(s, "=")
		n, err := strconv.Atoi(code)
		if !ok || err != nil || n < 224 || n > 254 || len(value) > 255 {
			return o, fmt.Errorf("--dhcp-private-option %q: want CODE=VALUE, CODE from 224 to 254, VALUE at most 255 bytes", s)
		}
		if o.Private == nil {
			o.Private = map[uint8]string{}
		}
		o.Private[uint8(n)] = value
	}
	return o, nil
}

// modifiers put the options in a reply.
func (o Options) modifiers() []dhcpv4.Modifier {
	var mods []dhcpv4.Modifier
	if o.BootFileName != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptBootFileName(o.BootFileName)))
	}
	if o.TFTPServerName != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptTFTPServerName(o.TFTPServerName)))
	}
	if len(o.NTPServers) > 0 {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptNTPServers(o.NTPServers...)))
	}
	for code, value := range o.Private {
		mods = append(mods, dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(code), []byte(value)))
	}
	return mods
}
