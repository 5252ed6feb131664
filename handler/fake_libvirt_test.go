package handler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"
)

// fakeDomain is a domain of fakeLibvirt.
type fakeDomain struct {
	xml    string
	status DomainStatus
}

// fakeLibvirt is one launcher's libvirtd: defined domains, counted calls, and an event stream
// the test feeds.
type fakeLibvirt struct {
	mu       sync.Mutex
	domains  map[string]*fakeDomain
	defines  int
	aborts   int
	starts   int
	startErr error
	stateErr error
	ops      []string // suspend, resume, reboot calls: "<op> <domain>"
	opErr    error
	events   chan LifecycleEvent
	stats    []libvirt.TypedParam // DomainStats' answer
	guest    []libvirt.TypedParam // GuestInfo's answer
	// screenshotPPM: Screenshot sends QEMU's PPM, as libvirt does for QEMU before 7.1.
	screenshotPPM bool
	// screenshotCut: that many Screenshot calls lose the image's start, as go-libvirt does
	// when libvirtd sends the image's first frame before its reply.
	screenshotCut int
	// screenshotStall: that many Screenshot calls time out first, as a call does whose reply
	// go-libvirt gave to the image's stream.
	screenshotStall int
	guestErr        error
	guestN          int      // GuestInfo calls
	probes          []string // the names ProbeDefinition was given
	gone            chan struct{}
	closed          bool
}

func newFakeLibvirt() *fakeLibvirt {
	return &fakeLibvirt{domains: map[string]*fakeDomain{}, events: make(chan LifecycleEvent, 16), gone: make(chan struct{})}
}

func (f *fakeLibvirt) DomainState(name string) (DomainStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stateErr != nil {
		return DomainStatus{}, f.stateErr
	}
	d, ok := f.domains[name]
	if !ok {
		return DomainStatus{}, errDomainNotFound
	}
	return d.status, nil
}

// ProbeDefinition gives each interface PCI bus 1+i, each virtio disk bus 0x10+i and each other
// disk drive unit i, as libvirt gives addresses, and defines nothing.
func (f *fakeLibvirt) ProbeDefinition(xml []byte) (string, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(string(xml)); err != nil {
		return "", err
	}
	f.mu.Lock()
	f.probes = append(f.probes, d.Name)
	f.mu.Unlock()
	pci := func(bus uint) *libvirtxml.DomainAddress {
		return &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Domain: ptr.To[uint](0), Bus: &bus, Slot: ptr.To[uint](0), Function: ptr.To[uint](0)}}
	}
	if d.Devices != nil {
		for i := range d.Devices.Interfaces {
			d.Devices.Interfaces[i].Address = pci(uint(1 + i))
		}
		for i := range d.Devices.Disks {
			disk := &d.Devices.Disks[i]
			if disk.Target != nil && disk.Target.Bus == "virtio" {
				disk.Address = pci(uint(0x10 + i))
				continue
			}
			disk.Address = &libvirtxml.DomainAddress{Drive: &libvirtxml.DomainAddressDrive{Controller: ptr.To[uint](0), Bus: ptr.To[uint](0), Target: ptr.To[uint](0), Unit: ptr.To(uint(i))}}
		}
	}
	return d.Marshal()
}

func (f *fakeLibvirt) DefineDomain(xml []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.defines++
	name := between(string(xml), "<name>", "</name>")
	if d, ok := f.domains[name]; ok {
		d.xml = string(xml)
		return nil
	}
	f.domains[name] = &fakeDomain{xml: string(xml), status: DomainStatus{State: libvirt.DomainShutoff, Reason: int32(libvirt.DomainShutoffUnknown)}}
	return nil
}

func (f *fakeLibvirt) StartDomain(name string, paused bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	d, ok := f.domains[name]
	if !ok {
		return errDomainNotFound
	}
	if f.startErr != nil {
		d.status = DomainStatus{State: libvirt.DomainShutoff, Reason: int32(libvirt.DomainShutoffFailed)}
		return f.startErr
	}
	if d.status.State == libvirt.DomainRunning {
		return errors.New("domain is already running")
	}
	d.status = DomainStatus{State: libvirt.DomainRunning, Reason: int32(libvirt.DomainRunningBooted)}
	if paused {
		d.status = DomainStatus{State: libvirt.DomainPaused, Reason: int32(libvirt.DomainPausedUser)}
	}
	// libvirt fills in a MAC for NICs that name none.
	d.xml = strings.Replace(d.xml, "<target dev=\"tap0\"", "<mac address=\"52:54:00:aa:bb:cc\"></mac><target dev=\"tap0\"", 1)
	return nil
}

// SuspendDomain, ResumeDomain and RebootDomain move the domain as libvirt would, and record
// the call in ops; opErr fails them.
func (f *fakeLibvirt) SuspendDomain(name string) error {
	return f.op("suspend", name, libvirt.DomainRunning, DomainStatus{State: libvirt.DomainPaused, Reason: int32(libvirt.DomainPausedUser)})
}

func (f *fakeLibvirt) ResumeDomain(name string) error {
	return f.op("resume", name, libvirt.DomainPaused, DomainStatus{State: libvirt.DomainRunning, Reason: int32(libvirt.DomainRunningUnpaused)})
}

func (f *fakeLibvirt) RebootDomain(name string) error {
	return f.op("reboot", name, libvirt.DomainRunning, DomainStatus{State: libvirt.DomainRunning, Reason: int32(libvirt.DomainRunningBooted)})
}

// opsList is a copy of ops, for a test that reads it while calls may still come.
func (f *fakeLibvirt) opsList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

func (f *fakeLibvirt) opsSeen() int { return len(f.opsList()) }

// FreezeFilesystems and ThawFilesystems record the call in ops and answer one file system;
// guestErr fails them as an agent that does not answer.
func (f *fakeLibvirt) FreezeFilesystems(name string) (int, error) { return f.agentOp("freeze", name) }

func (f *fakeLibvirt) ThawFilesystems(name string) (int, error) { return f.agentOp("thaw", name) }

func (f *fakeLibvirt) agentOp(what, name string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, what+" "+name)
	if f.guestErr != nil {
		return 0, f.guestErr
	}
	if _, ok := f.domains[name]; !ok {
		return 0, errDomainNotFound
	}
	return 1, nil
}

func (f *fakeLibvirt) op(what, name string, from libvirt.DomainState, to DomainStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, what+" "+name)
	if f.opErr != nil {
		return f.opErr
	}
	d, ok := f.domains[name]
	if !ok {
		return errDomainNotFound
	}
	if d.status.State != from {
		return libvirt.Error{Code: uint32(libvirt.ErrOperationInvalid), Message: "domain is not in the right state"}
	}
	d.status = to
	return nil
}

func (f *fakeLibvirt) DomainXML(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.domains[name]
	if !ok {
		return "", errDomainNotFound
	}
	return d.xml, nil
}

// DomainStats answers stats (set by the test) for a running domain.
func (f *fakeLibvirt) DomainStats(name string) ([]libvirt.TypedParam, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.domains[name]; !ok || d.status.State != libvirt.DomainRunning {
		return nil, errDomainNotFound
	}
	return f.stats, nil
}

// GuestInfo answers guest (set by the test), or guestErr.
func (f *fakeLibvirt) GuestInfo(name string) ([]libvirt.TypedParam, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.guestN++
	if _, ok := f.domains[name]; !ok {
		return nil, errDomainNotFound
	}
	return f.guest, f.guestErr
}

func (f *fakeLibvirt) LifecycleEvents(ctx context.Context) (<-chan LifecycleEvent, error) {
	out := make(chan LifecycleEvent)
	go func() {
		defer close(out)
		for {
			select {
			case ev := <-f.events:
				out <- ev
			case <-f.gone:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (f *fakeLibvirt) Disconnected() <-chan struct{} { return f.gone }

func (f *fakeLibvirt) MigrateDomain(name string, p MigrationParams) error {
	return errors.New("not faked")
}

func (f *fakeLibvirt) AbortJob(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborts++
	return nil
}

func (f *fakeLibvirt) CompletedMigration(name string) (MigrationStats, error) {
	return MigrationStats{Elapsed: 1200 * time.Millisecond, Downtime: 240 * time.Millisecond, Bytes: 100 << 20}, nil
}

// fakePeerPID is the fake libvirtd's process.
const fakePeerPID = 4242

func (f *fakeLibvirt) PeerPID() int { return fakePeerPID }

func (f *fakeLibvirt) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// set puts a domain in a state, as if the guest or libvirt had moved it there.
func (f *fakeLibvirt) set(name string, state libvirt.DomainState, reason int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.domains[name]
	if !ok {
		d = &fakeDomain{xml: "<domain><name>" + name + "</name></domain>"}
		f.domains[name] = d
	}
	d.status = DomainStatus{State: state, Reason: reason}
}

func (f *fakeLibvirt) counts() (defines, starts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.defines, f.starts
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(rest, to)
	return out
}

// Screenshot answers a 2x1 display, red then blue, as screenshotImage says (a PNG, as
// libvirt's QEMU driver sends, unless a test sets a PPM).
func (f *fakeLibvirt) Screenshot(name string, w io.Writer) (string, error) {
	if _, err := f.DomainXML(name); err != nil {
		return "", err
	}
	if f.screenshotStall > 0 {
		f.screenshotStall--
		return "", fmt.Errorf("taking a screenshot: %w within 10s", errLauncherUnresponsive)
	}
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 0, color.RGBA{B: 255, A: 255})
	if f.screenshotPPM {
		_, err := w.Write([]byte("P6\n2 1\n255\n\xff\x00\x00\x00\x00\xff"))
		return "image/x-portable-pixmap", err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	data := buf.Bytes()
	if f.screenshotCut > 0 {
		f.screenshotCut--
		data = data[16:]
	}
	_, err := w.Write(data)
	return "image/png", err
}
