package handler

import (
	"encoding/binary"
	"fmt"
)

// screenshotOrder puts a screenshot's reply before its image. libvirtd's worker adds the
// image's stream to the connection, and its event loop starts sending the image at once,
// before the worker has queued the call's reply; libvirt's own client sorts the frames by type,
// but go-libvirt takes the first frame of the call's serial for the reply. With the image
// first, go-libvirt cut the image's start, or, when the reply came after the stream's end,
// blocked delivering it to a call that had already returned, and the call timed out.
type screenshotOrder struct {
	early map[uint32][][]byte // image frames whose call has no reply yet, by serial
	held  int                 // bytes in early
	open  map[uint32]bool     // serials whose reply passed and whose stream goes on
}

// maxEarlyImage bounds what waits for a reply: the largest screenshot the handler takes.
const maxEarlyImage = maxScreenshot

// order returns the frames to pass on now, in the order go-libvirt expects; frame was checked.
func (o *screenshotOrder) order(frame []byte) ([][]byte, error) {
	be := binary.BigEndian
	proc, typ, serial, status := be.Uint32(frame[12:]), be.Uint32(frame[16:]), be.Uint32(frame[20:]), be.Uint32(frame[24:])
	if proc != procDomainScreenshot {
		return [][]byte{frame}, nil
	}
	if o.early == nil {
		o.early, o.open = map[uint32][][]byte{}, map[uint32]bool{}
	}
	if typ == typeReply {
		held := o.early[serial]
		delete(o.early, serial)
		for _, f := range held {
			o.held -= len(f)
		}
		ended := len(held) > 0 && be.Uint32(held[len(held)-1][24:]) != statusContinue
		if status == statusOK && !ended {
			o.open[serial] = true
		}
		return append([][]byte{frame}, held...), nil
	}
	if o.open[serial] {
		if status != statusContinue {
			delete(o.open, serial)
		}
		return [][]byte{frame}, nil
	}
	if o.held+len(frame) > maxEarlyImage {
		return nil, fmt.Errorf("%w: more than %d bytes of a screenshot before its reply", errLauncherProtocol, maxEarlyImage)
	}
	o.early[serial] = append(o.early[serial], frame)
	o.held += len(frame)
	return nil, nil
}
