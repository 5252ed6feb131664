package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/term"
	"libvirt.org/go/libvirtxml"
)

// ConsoleConfig is what `virt-launcher console` needs to find the guest's serial port.
type ConsoleConfig struct {
	Socket    string // the pod's libvirtd socket
	Domain    string // <namespace>_<name>
	TTYPrefix string // only ptys under it are opened (/dev/pts/), so a domain XML cannot name another file
}

// AttachConsole relays the domain's serial port 0 (a pty that QEMU holds the master of) to
// in and out until in ends or the pty closes. virt-api runs it through pods/exec in the
// compute container, where libvirtd and QEMU live, so the pty is in this container's
// /dev/pts. The pty is opened directly rather than through libvirt's console stream: it is
// two plain file copies, and the pure-Go libvirt client only streams one direction.
func AttachConsole(cfg ConsoleConfig, in io.Reader, out io.Writer) error {
	path, err := serialPTY(cfg)
	if err != nil {
		return err
	}
	return relayPTY(path, in, out)
}

// relayPTY copies between the pty at path and in/out until either direction ends.
func relayPTY(path string, in io.Reader, out io.Writer) error {
	pty, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open serial console %s: %w", path, err)
	}
	defer pty.Close()
	// Raw mode on our side of the pty: no echo, no line editing, no CR/LF mangling; the
	// guest's own tty does all of that, as on a real serial line.
	if st, err := term.MakeRaw(int(pty.Fd())); err == nil {
		defer func() { _ = term.Restore(int(pty.Fd()), st) }()
	}
	done := make(chan error, 2)
	go func() { _, err := io.Copy(out, pty); done <- err }()
	go func() { _, err := io.Copy(pty, in); done <- err }()
	err = <-done
	// EIO: QEMU closed its side (the guest stopped); that ends the session, it is no failure.
	if errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
		return nil
	}
	return err
}

// serialPTY asks libvirtd for the running domain's XML and returns serial 0's pty path.
func serialPTY(cfg ConsoleConfig) (string, error) {
	conn, err := connectLibvirt(cfg.Socket)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// The console may be asked for while the guest is still starting: wait a little.
	deadline := time.Now().Add(30 * time.Second)
	for {
		path, err := conn.serialPTY(cfg.Domain)
		if err == nil {
			if !isUnder(path, cfg.TTYPrefix) {
				return "", fmt.Errorf("serial console of %s is %q, not a pty under %s", cfg.Domain, path, cfg.TTYPrefix)
			}
			return path, nil
		}
		if time.Now().After(deadline) {
			return "", err
		}
		time.Sleep(time.Second)
	}
}

func (c *libvirtConn) serialPTY(name string) (string, error) {
	dom, err := c.l.DomainLookupByName(name)
	if err != nil {
		return "", fmt.Errorf("domain %s: %w", name, err)
	}
	desc, err := c.l.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return "", fmt.Errorf("domain %s XML: %w", name, err)
	}
	return serialPTYFromXML(desc)
}

// serialPTYFromXML finds serial port 0's pty in a running domain's XML; libvirt fills in
// <source path='/dev/pts/N'/> once QEMU has allocated it. libvirtxml gives a type="pty"
// serial (or one without a type, which libvirt reads as pty) a Pty source.
func serialPTYFromXML(desc string) (string, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(desc); err != nil {
		return "", fmt.Errorf("parse domain XML: %w", err)
	}
	var serials []libvirtxml.DomainSerial
	if d.Devices != nil {
		serials = d.Devices.Serials
	}
	for _, s := range serials {
		port0 := s.Target == nil || s.Target.Port == nil || *s.Target.Port == 0
		if s.Source != nil && s.Source.Pty != nil && s.Source.Pty.Path != "" && port0 {
			return s.Source.Pty.Path, nil
		}
	}
	return "", errors.New("the domain has no serial pty (yet)")
}

func isUnder(path, prefix string) bool {
	return prefix == "" || (len(path) > len(prefix) && path[:len(prefix)] == prefix)
}
