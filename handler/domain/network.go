package domain

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// nicDevices maps the spec's NIC models to QEMU device names: user-mode NICs are given to
// QEMU directly. All of them have their option ROM in the launcher image (ipxe-qemu).
var nicDevices = map[string]string{"virtio": "virtio-net-pci", "e1000": "e1000", "e1000e": "e1000e", "rtl8139": "rtl8139",
	"igb": "igb", "ne2k_pci": "ne2k_pci", "pcnet": "pcnet"}

// tapNameRE is a Linux interface name (IFNAMSIZ 16 with the NUL).
var tapNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,15}$`)

var envIfacesPath = field.NewPath("environment", "interfaces")

// interfaces turns spec interfaces into tap NICs libvirt manages, or user-mode NICs passed
// to QEMU as arguments. Every value that ends up in a QEMU argument is a number or checked
// against a strict syntax, as a comma would let a spec inject QEMU options.
func (c *converter) interfaces() ([]libvirtxml.DomainInterface, *libvirtxml.DomainQEMUCommandline) {
	networks := map[string]int{}
	for j, n := range c.vmi.Spec.Networks {
		if _, dup := networks[n.Name]; dup {
			c.fail(field.Duplicate(specPath.Child("networks").Index(j).Child("name"), n.Name))
			continue
		}
		networks[n.Name] = j
	}
	seen, published := map[string]bool{}, map[string]bool{}
	var out []libvirtxml.DomainInterface
	var args []libvirtxml.DomainQEMUCommandlineArg
	for i := range c.vmi.Spec.Domain.Devices.Interfaces {
		iface := &c.vmi.Spec.Domain.Devices.Interfaces[i]
		p := domainPath.Child("devices", "interfaces").Index(i)
		if iface.Name == "" || seen[iface.Name] {
			c.fail(field.Invalid(p.Child("name"), iface.Name, "must be set and unique"))
			continue
		}
		seen[iface.Name] = true
		j, ok := networks[iface.Name]
		if !ok {
			c.fail(field.Invalid(p.Child("name"), iface.Name, "no network of this name in spec.networks"))
			continue
		}
		network := &c.vmi.Spec.Networks[j]
		if network.Pod == nil {
			c.fail(field.Invalid(specPath.Child("networks").Index(j), network.Name, "only pod networks are supported"))
			continue
		}
		if iface.Bridge != nil && iface.Masquerade != nil {
			c.fail(field.Invalid(p, iface.Name, "must set at most one of bridge and masquerade"))
			continue
		}
		model := iface.Model
		if model == "" {
			model = "virtio"
		}
		device, ok := nicDevices[model]
		if !ok {
			c.fail(field.NotSupported(p.Child("model"), model, slices.Sorted(maps.Keys(nicDevices))))
			continue
		}
		mac, ok := c.mac(p.Child("macAddress"), iface.MacAddress)
		if !ok {
			continue
		}
		att, ok := c.env.Interfaces[iface.Name]
		if !ok {
			c.fail(field.Required(p, "the node resolved no network attachment for this interface"))
			continue
		}
		ep := envIfacesPath.Key(iface.Name)
		switch att.Mode {
		case NetworkTap:
			if !tapNameRE.MatchString(att.TapDevice) {
				c.fail(field.Invalid(ep.Child("tapDevice"), att.TapDevice, "must be a Linux interface name"))
				continue
			}
			// An ethernet source without addresses only sets type="ethernet".
			nic := libvirtxml.DomainInterface{
				Source: &libvirtxml.DomainInterfaceSource{Ethernet: &libvirtxml.DomainInterfaceSourceEthernet{}},
				Target: &libvirtxml.DomainInterfaceTarget{Dev: att.TapDevice, Managed: "no"},
				Model:  &libvirtxml.DomainInterfaceModel{Type: model},
			}
			if mac == "" {
				mac = att.MAC
			}
			if mac != "" {
				nic.MAC = &libvirtxml.DomainInterfaceMAC{Address: mac}
			}
			if !c.nicPlacement(p, iface, &nic) {
				continue
			}
			out = append(out, nic)
		case NetworkUser:
			id := fmt.Sprintf("vmctl-net%d", i)
			netdev, ok := c.userNetdev(id, j, network.Pod, ep, att.Forwards, published)
			if !ok {
				continue
			}
			dev := fmt.Sprintf("%s,netdev=%s,id=vmctl-nic%d", device, id, i)
			if mac != "" {
				dev += ",mac=" + mac
			}
			extra, ok := c.userNICPlacement(p, iface)
			if !ok {
				continue
			}
			dev += extra
			for _, a := range []string{"-netdev", netdev, "-device", dev} {
				args = append(args, libvirtxml.DomainQEMUCommandlineArg{Value: a})
			}
		default:
			c.fail(field.NotSupported(ep.Child("mode"), att.Mode, []NetworkMode{NetworkUser, NetworkTap}))
		}
	}
	if len(args) == 0 {
		return out, nil
	}
	return out, &libvirtxml.DomainQEMUCommandline{Args: args}
}

// userNetdev is QEMU's -netdev user option string: the guest network and the port forwards
// on the pod's addresses. published tracks pod ports across interfaces, as two forwards of
// one pod port would make QEMU fail to start.
func (c *converter) userNetdev(id string, j int, pod *v1.PodNetwork, ep *field.Path, forwards []PortForward, published map[string]bool) (string, bool) {
	opts := []string{"user", "id=" + id}
	if cidr := pod.VMNetworkCIDR; cidr != "" {
		p := specPath.Child("networks").Index(j).Child("pod", "vmNetworkCIDR")
		ip, ipnet, err := net.ParseCIDR(cidr)
		if err != nil || ip.To4() == nil {
			c.fail(field.Invalid(p, cidr, "must be an IPv4 CIDR"))
			return "", false
		}
		// SLIRP puts its gateway at .2, its DNS at .3 and the guest at .15.
		if ones, _ := ipnet.Mask.Size(); ones > 27 {
			c.fail(field.Invalid(p, cidr, "user-mode networking needs a /27 or larger network"))
			return "", false
		}
		opts = append(opts, "net="+ipnet.String())
	}
	for k, f := range forwards {
		fp := ep.Child("forwards").Index(k)
		proto := strings.ToLower(f.Protocol)
		if proto != "tcp" && proto != "udp" {
			c.fail(field.NotSupported(fp.Child("protocol"), f.Protocol, []string{"tcp", "udp"}))
			return "", false
		}
		if f.Port < 1 || f.Port > 65535 || f.GuestPort < 1 || f.GuestPort > 65535 {
			c.fail(field.Invalid(fp, fmt.Sprintf("%d->%d", f.Port, f.GuestPort), "ports must be between 1 and 65535"))
			return "", false
		}
		key := fmt.Sprintf("%s/%d", proto, f.Port)
		if published[key] {
			c.fail(field.Duplicate(fp, key))
			return "", false
		}
		published[key] = true
		opts = append(opts, fmt.Sprintf("hostfwd=%s::%d-:%d", proto, f.Port, f.GuestPort))
	}
	return strings.Join(opts, ","), true
}

// mac normalises a MAC address; libvirt refuses multicast ones.
func (c *converter) mac(p *field.Path, s string) (string, bool) {
	if s == "" {
		return "", true
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		c.fail(field.Invalid(p, s, "must be a 6-byte MAC address such as 02:00:00:00:00:01"))
		return "", false
	}
	if hw[0]&1 != 0 {
		c.fail(field.Invalid(p, s, "must be a unicast MAC address (lowest bit of the first byte clear)"))
		return "", false
	}
	return hw.String(), true
}
