// Package fakelibvirtd is a hostile libvirtd: it listens where a launcher's libvirtd would and
// answers calls with frames libvirt never sends, or not at all, to prove that virt-handler
// survives a tenant's launcher that does so.
package fakelibvirtd

import (
	"encoding/binary"
	"io"
	"net"
)

// Modes of misbehaviour.
const (
	// HugeFrame announces a frame of almost 4 GiB.
	HugeFrame = "huge-frame"
	// ShortFrame announces a frame shorter than its own header.
	ShortFrame = "short-frame"
	// HugeString sends a well-framed error reply whose message claims 2 GiB.
	HugeString = "huge-string"
	// Hang reads calls and never answers.
	Hang = "hang"
)

// Serve answers every connection on l in mode until l is closed.
func Serve(l net.Listener, mode string) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			return err
		}
		go answer(conn, mode)
	}
}

func answer(conn net.Conn, mode string) {
	defer conn.Close()
	for {
		var word [4]byte
		if _, err := io.ReadFull(conn, word[:]); err != nil {
			return
		}
		call := make([]byte, binary.BigEndian.Uint32(word[:])-4)
		if _, err := io.ReadFull(conn, call); err != nil || len(call) < 24 {
			return
		}
		if mode == Hang {
			continue
		}
		if _, err := conn.Write(reply(mode, call[:24])); err != nil {
			return
		}
	}
}

// reply is the misbehaving answer to a call whose header is hdr (program, version, procedure,
// type, serial, status).
func reply(mode string, hdr []byte) []byte {
	be := binary.BigEndian
	out := make([]byte, 28)
	copy(out[4:], hdr)
	be.PutUint32(out[16:], 1) // type reply
	switch mode {
	case HugeFrame:
		be.PutUint32(out, 0xfffffff0)
	case ShortFrame:
		be.PutUint32(out, 8)
	default: // HugeString: status error; code, domain, then a message of 2 GiB
		be.PutUint32(out[24:], 1)
		out = be.AppendUint32(out, 1)          // code
		out = be.AppendUint32(out, 0)          // domain
		out = be.AppendUint32(out, 1)          // message present
		out = be.AppendUint32(out, 0x7ffffff0) // its length
		out = append(out, "boom"...)
		be.PutUint32(out, uint32(len(out)))
	}
	return out
}
