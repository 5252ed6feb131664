package podnet

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/vmctl/vmctl/launcher/layout"
)

// fakeLinks records the calls the setup makes, on a namespace that starts with the given links.
type fakeLinks struct {
	links map[string]netlink.Link
	calls []string
	next  int
}

func newFakeLinks(existing ...netlink.Link) *fakeLinks {
	f := &fakeLinks{links: map[string]netlink.Link{}, next: 10}
	for _, l := range existing {
		f.links[l.Attrs().Name] = l
	}
	return f
}

func (f *fakeLinks) LinkByName(name string) (netlink.Link, error) {
	if l, ok := f.links[name]; ok {
		return l, nil
	}
	return nil, netlink.LinkNotFoundError{}
}

func (f *fakeLinks) LinkAdd(l netlink.Link) error {
	f.next++
	l.Attrs().Index = f.next
	f.links[l.Attrs().Name] = l
	f.calls = append(f.calls, fmt.Sprintf("add %s %s mtu %d", l.Type(), l.Attrs().Name, l.Attrs().MTU))
	return nil
}

func (f *fakeLinks) AddrReplace(l netlink.Link, a *netlink.Addr) error {
	f.calls = append(f.calls, fmt.Sprintf("addr %s %s", l.Attrs().Name, a.IPNet))
	return nil
}

func (f *fakeLinks) LinkSetMaster(l, m netlink.Link) error {
	f.calls = append(f.calls, fmt.Sprintf("master %s %s", l.Attrs().Name, m.Attrs().Name))
	return nil
}

func (f *fakeLinks) LinkSetMTU(l netlink.Link, mtu int) error {
	f.calls = append(f.calls, fmt.Sprintf("mtu %s %d", l.Attrs().Name, mtu))
	return nil
}

func (f *fakeLinks) LinkSetUp(l netlink.Link) error {
	f.calls = append(f.calls, "up "+l.Attrs().Name)
	return nil
}

func TestLinksSetup(t *testing.T) {
	eth0 := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0", MTU: 1450, Index: 2}}
	l := links{Bridge: layout.BridgeName, Tap: layout.TapDevice, Gateway: layout.Gateway(), TapOwner: 107}
	tests := []struct {
		name      string
		existing  []netlink.Link
		wantCalls []string
		wantErr   bool
	}{
		{name: "fresh pod", existing: []netlink.Link{eth0}, wantCalls: []string{
			"add bridge k6t-br0 mtu 1450", "addr k6t-br0 10.0.2.1/24",
			"add tuntap tap0 mtu 1450", "mtu tap0 1450", "master tap0 k6t-br0", "up tap0", "up k6t-br0",
		}},
		{name: "devices already there", existing: []netlink.Link{eth0,
			&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: layout.BridgeName, Index: 3}},
			&netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: layout.TapDevice, Index: 4}},
		}, wantCalls: []string{
			"addr k6t-br0 10.0.2.1/24", "mtu tap0 1450", "master tap0 k6t-br0", "up tap0", "up k6t-br0",
		}},
		{name: "no pod interface", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLinks(tc.existing...)
			mtu, err := l.setup(f, "eth0")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				var nf netlink.LinkNotFoundError
				if !errors.As(err, &nf) {
					t.Errorf("error %v does not wrap the lookup's", err)
				}
				return
			}
			if mtu != 1450 {
				t.Errorf("mtu %d, want the pod interface's 1450", mtu)
			}
			if !slices.Equal(f.calls, tc.wantCalls) {
				t.Errorf("calls:\n%q\nwant:\n%q", f.calls, tc.wantCalls)
			}
			if tap, ok := f.links[layout.TapDevice].(*netlink.Tuntap); ok && tc.name == "fresh pod" {
				if tap.Mode != netlink.TUNTAP_MODE_TAP || tap.Queues != 0 || tap.NonPersist {
					t.Errorf("tap %+v: want a persistent single-queue tap", tap)
				}
				if tap.Owner != 107 || tap.Group != 107 {
					t.Errorf("tap owner %d group %d: want the launcher's 107", tap.Owner, tap.Group)
				}
			}
		})
	}
}
