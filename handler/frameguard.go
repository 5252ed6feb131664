package handler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// A launcher's libvirtd runs in the tenant's pod, so what it sends is untrusted input to the
// node's shared agent. go-libvirt trusts it: it allocates whatever a frame's length says (up to
// 4 GiB), panics in its reader goroutine on a length below the header's (where nothing can
// recover), and its XDR decoder allocates whatever a string's or array's length word says, even
// in a frame of a few bytes. frameGuard sits between the socket and go-libvirt and passes on
// only frames that are bounded and decode safely: every length inside fits in the frame, and
// the frame is a reply, stream or event the handler asked for. Anything else ends the connection with
// errLauncherProtocol, which fails that launcher's instance only.

// maxFrame bounds one frame. The largest the handler receives is a domain's XML, a few KiB;
// libvirt's own limit is 32 MiB, which times every launcher of a node would be too much.
const maxFrame = 1 << 20

// Events are only hints to resync; a launcher flooding them is throttled, not followed.
const (
	eventRate  = 20
	eventBurst = 100
)

// errLauncherProtocol is a launcher's libvirtd sending what libvirt never sends.
var errLauncherProtocol = errors.New("the launcher's libvirtd broke the protocol")

// libvirt RPC framing (remote_protocol.x, virnetprotocol.x).
const (
	frameHeaderLen  = 4 + 24 // length word, then program, version, procedure, type, serial, status
	remoteProgram   = 0x20008086
	typeReply       = 1
	typeMessage     = 2
	typeStream      = 3
	statusOK        = 0
	statusError     = 1
	statusContinue  = 2 // a stream's data frame: more follows
	uuidLen         = 16
	authTypeListMax = 20
	// REMOTE_DOMAIN_LIST_MAX and REMOTE_CONNECT_GET_ALL_DOMAIN_STATS_MAX.
	domainListMax      = 16384
	domainStatsListMax = 262144
	// REMOTE_DOMAIN_JOB_STATS_MAX.
	jobStatsMax = 64
	// REMOTE_DOMAIN_GUEST_INFO_PARAMS_MAX.
	guestInfoParamsMax = 2048
)

// Remote procedures the handler calls (their replies) or subscribes to (their messages).
const (
	procConnectOpen        = 1
	procConnectClose       = 2
	procDomainCreate       = 9
	procDomainGetXMLDesc   = 14
	procDomainLookupByName = 23
	procDomainReboot       = 27
	procDomainResume       = 28
	procDomainSuspend      = 34
	procDomainCreateFlags  = 196
	procAuthList           = 66
	procAuthPolkit         = 70
	procDomainGetState     = 212
	// REMOTE_PROC_DOMAIN_SCREENSHOT: its reply, then the image on a stream.
	procDomainScreenshot     = 211
	procEventRegisterAny     = 316
	procEventDeregisterAny   = 317
	procEventLifecycle       = 318
	procGetAllDomainStats    = 344
	procDomainDefineXMLFlags = 350
	procDomainUndefineFlags  = 231
	procDomainAbortJob       = 164
	procDomainGetJobStats    = 298
	// REMOTE_PROC_DOMAIN_MIGRATE_PERFORM3_PARAMS: its reply is the migration cookie (opaque).
	procDomainMigratePerform3Params = 305
	procDomainFSFreeze              = 335
	procDomainFSThaw                = 336
	procEventAgentLifecycle         = 348
	procDomainGetGuestInfo          = 418
)

// replies are the shapes of the return values of the procedures the handler calls.
var replies = map[uint32]func(*xdrCursor){
	procConnectOpen:          func(*xdrCursor) {},
	procConnectClose:         func(*xdrCursor) {},
	procDomainCreate:         func(*xdrCursor) {},
	procDomainReboot:         func(*xdrCursor) {},
	procDomainResume:         func(*xdrCursor) {},
	procDomainSuspend:        func(*xdrCursor) {},
	procEventDeregisterAny:   func(*xdrCursor) {},
	procDomainGetXMLDesc:     (*xdrCursor).str,
	procDomainLookupByName:   (*xdrCursor).domain,
	procDomainDefineXMLFlags: (*xdrCursor).domain,
	procDomainUndefineFlags:  func(*xdrCursor) {},
	procDomainCreateFlags:    (*xdrCursor).domain,
	procAuthList:             func(c *xdrCursor) { c.array(authTypeListMax, (*xdrCursor).word) },
	procAuthPolkit:           (*xdrCursor).word,
	procEventRegisterAny:     (*xdrCursor).word,
	procDomainGetState:       func(c *xdrCursor) { c.word(); c.word() },
	procGetAllDomainStats:    func(c *xdrCursor) { c.array(domainListMax, domainStatsRecord) },
	procDomainAbortJob:       func(*xdrCursor) {},
	procDomainGetJobStats:    func(c *xdrCursor) { c.word(); c.array(jobStatsMax, (*xdrCursor).typedParam) },
	procDomainGetGuestInfo:   func(c *xdrCursor) { c.array(guestInfoParamsMax, (*xdrCursor).typedParam) },
	procDomainFSFreeze:       (*xdrCursor).word, // how many file systems
	procDomainFSThaw:         (*xdrCursor).word,
	procDomainScreenshot:     func(c *xdrCursor) { c.optional(c.str) }, // the image's MIME type
	// An opaque<> is encoded as a string is; take bounds it to the frame.
	procDomainMigratePerform3Params: (*xdrCursor).str,
}

// domainStatsRecord is remote_domain_stats_record: a domain and its statistics.
func domainStatsRecord(c *xdrCursor) {
	c.domain()
	c.array(domainStatsListMax, (*xdrCursor).typedParam)
}

// remoteError is remote_error, the payload of every failed call.
func remoteError(c *xdrCursor) {
	c.word()              // code
	c.word()              // domain
	c.optional(c.str)     // message
	c.word()              // level
	c.optional(c.domain)  // dom
	c.optional(c.str)     // str1
	c.optional(c.str)     // str2
	c.optional(c.str)     // str3
	c.word()              // int1
	c.word()              // int2
	c.optional(c.network) // net
}

// lifecycleEvent is remote_domain_event_callback_lifecycle_msg, and
// remote_domain_event_callback_agent_lifecycle_msg has the same shape (state, reason).
func lifecycleEvent(c *xdrCursor) {
	c.word() // callback ID
	c.domain()
	c.word() // event
	c.word() // detail
}

// frameGuard is a launcher connection that only lets well-formed frames through to go-libvirt.
type frameGuard struct {
	net.Conn
	events  *rate.Limiter
	order   screenshotOrder
	ready   [][]byte // checked frames to pass on after pending
	pending []byte
	failure atomic.Pointer[error]
}

func newFrameGuard(conn net.Conn) *frameGuard {
	return &frameGuard{Conn: conn, events: rate.NewLimiter(eventRate, eventBurst)}
}

// Read hands go-libvirt the bytes of checked frames. A bad frame closes the connection, so
// pending calls end, and is remembered for err.
func (g *frameGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if len(g.ready) > 0 {
			g.pending, g.ready = g.ready[0], g.ready[1:]
			continue
		}
		frames, err := g.next()
		if err != nil {
			if errors.Is(err, errLauncherProtocol) {
				g.failure.CompareAndSwap(nil, &err)
				_ = g.Conn.Close()
			}
			return 0, err
		}
		g.ready = frames
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// err is the protocol violation that ended the connection, if one did.
func (g *frameGuard) err() error {
	if e := g.failure.Load(); e != nil {
		return *e
	}
	return nil
}

// next reads frames until some are to be passed on (not a dropped event, nor an image
// waiting for its reply).
func (g *frameGuard) next() ([][]byte, error) {
	for {
		var word [4]byte
		if _, err := io.ReadFull(g.Conn, word[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(word[:])
		if n < frameHeaderLen || n > maxFrame {
			return nil, fmt.Errorf("%w: a frame of %d bytes (allowed %d to %d)", errLauncherProtocol, n, frameHeaderLen, maxFrame)
		}
		frame := make([]byte, n)
		copy(frame, word[:])
		if _, err := io.ReadFull(g.Conn, frame[4:]); err != nil {
			return nil, err
		}
		isEvent, err := checkFrame(frame)
		if err != nil {
			return nil, err
		}
		if isEvent && !g.events.Allow() {
			continue
		}
		if frames, err := g.order.order(frame); err != nil || len(frames) > 0 {
			return frames, err
		}
	}
}

// checkFrame accepts a reply to one of the handler's calls, the stream of a screenshot, or a
// lifecycle event, whose every length fits in the frame; it says whether it is an event.
func checkFrame(frame []byte) (isEvent bool, err error) {
	be := binary.BigEndian
	program, proc, typ, status := be.Uint32(frame[4:]), be.Uint32(frame[12:]), be.Uint32(frame[16:]), be.Uint32(frame[24:])
	if program != remoteProgram {
		return false, fmt.Errorf("%w: program %#x", errLauncherProtocol, program)
	}
	var shape func(*xdrCursor)
	switch {
	case typ == typeMessage && (proc == procEventLifecycle || proc == procEventAgentLifecycle) && status == statusOK:
		shape, isEvent = lifecycleEvent, true
	case typ == typeReply && status == statusError:
		shape = remoteError
	case typ == typeReply && status == statusOK:
		shape = replies[proc]
	case typ == typeStream && proc == procDomainScreenshot && (status == statusContinue || status == statusOK):
		shape = func(*xdrCursor) {} // raw image bytes, bounded by the frame
	case typ == typeStream && proc == procDomainScreenshot && status == statusError:
		shape = remoteError
	}
	if shape == nil {
		return false, fmt.Errorf("%w: unexpected frame (procedure %d, type %d, status %d)", errLauncherProtocol, proc, typ, status)
	}
	c := &xdrCursor{b: frame[frameHeaderLen:]}
	shape(c)
	if c.err != nil {
		return false, fmt.Errorf("%w: procedure %d: %v", errLauncherProtocol, proc, c.err)
	}
	return isEvent, nil
}
