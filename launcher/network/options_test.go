package network

import (
	"net"
	"strings"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions("pxelinux.0", "tftp.example", []string{"10.0.0.1"}, []string{"224=extra", "254=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	if o.BootFileName != "pxelinux.0" || o.TFTPServerName != "tftp.example" || len(o.NTPServers) != 1 || !o.NTPServers[0].Equal(net.IPv4(10, 0, 0, 1)) ||
		o.Private[224] != "extra" || o.Private[254] != "a=b" {
		t.Errorf("ParseOptions = %+v", o)
	}
	for _, bad := range []struct {
		ntp, private []string
		boot         string
		want         string
	}{
		{ntp: []string{"fd00::1"}, want: "not an IPv4 address"},
		{private: []string{"223=x"}, want: "CODE from 224 to 254"},
		{private: []string{"240"}, want: "want CODE=VALUE"},
		{boot: strings.Repeat("b", 256), want: "at most 255"},
	} {
		if _, err := ParseOptions(bad.boot, "", bad.ntp, bad.private); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseOptions(%q, %q, %q): %v, want %q", bad.boot, bad.ntp, bad.private, err, bad.want)
		}
	}
}

// TestReplyCarriesTheOptions: the lease the guest gets has the interface's dhcpOptions.
func TestReplyCarriesTheOptions(t *testing.T) {
	l := testLease
	l.Options = Options{BootFileName: "pxelinux.0", TFTPServerName: "tftp.example", NTPServers: []net.IP{net.IPv4(10, 0, 0, 1).To4()}, Private: map[uint8]string{240: "extra"}}
	req, err := dhcpv4.NewDiscovery(net.HardwareAddr{0x52, 0x54, 0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := reply(req, l)
	if err != nil {
		t.Fatal(err)
	}
	ntp := resp.NTPServers()
	if resp.BootFileNameOption() != "pxelinux.0" || resp.TFTPServerName() != "tftp.example" || len(ntp) != 1 || !ntp[0].Equal(net.IPv4(10, 0, 0, 1)) ||
		string(resp.Options.Get(dhcpv4.GenericOptionCode(240))) != "extra" {
		t.Errorf("reply options: %s", resp.Summary())
	}
	checkLease(t, resp)
}
