package handler

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"testing"
)

// streamFrame is a frame of the call serial with raw bytes after its header.
func streamFrame(proc, typ, serial, status uint32, payload []byte) []byte {
	f := frame(proc, typ, status)
	binary.BigEndian.PutUint32(f[20:], serial)
	f = append(f, payload...)
	binary.BigEndian.PutUint32(f, uint32(len(f)))
	return f
}

// TestScreenshotOrder: image frames that come before their call's reply wait for it, and pass
// right after it; a stream already open passes at once; other calls are not held.
func TestScreenshotOrder(t *testing.T) {
	reply := streamFrame(procDomainScreenshot, typeReply, 7, statusOK, nil)
	data := streamFrame(procDomainScreenshot, typeStream, 7, statusContinue, []byte("img!"))
	end := streamFrame(procDomainScreenshot, typeStream, 7, statusOK, nil)
	other := streamFrame(procDomainGetState, typeReply, 8, statusOK, nil)
	for _, tc := range []struct {
		name string
		in   [][]byte
		want [][]byte
	}{
		{"reply first", [][]byte{reply, data, end}, [][]byte{reply, data, end}},
		{"whole image first", [][]byte{data, end, reply, other}, [][]byte{reply, data, end, other}},
		{"image's start first", [][]byte{data, reply, data, end}, [][]byte{reply, data, data, end}},
		{"another call's reply meanwhile", [][]byte{data, other, reply, end}, [][]byte{other, reply, data, end}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o screenshotOrder
			var got [][]byte
			for _, f := range tc.in {
				out, err := o.order(f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, out...)
			}
			if !slices.EqualFunc(got, tc.want, bytes.Equal) {
				t.Errorf("passed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScreenshotOrderIsBounded: a launcher that streams an image and never replies fails
// its connection once it has sent more than any screenshot.
func TestScreenshotOrderIsBounded(t *testing.T) {
	var o screenshotOrder
	chunk := streamFrame(procDomainScreenshot, typeStream, 3, statusContinue, make([]byte, maxFrame-frameHeaderLen))
	for range maxEarlyImage / len(chunk) {
		if _, err := o.order(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.order(chunk); !isLauncherFault(err) {
		t.Fatalf("got %v, want a protocol error", err)
	}
}

// TestScreenshotWithTheImageBeforeTheReply: through go-libvirt, a libvirtd that sends the whole
// image before the call's reply, as libvirtd's event loop can, gives the image whole.
func TestScreenshotWithTheImageBeforeTheReply(t *testing.T) {
	dir, l := launcherListener(t)
	image := append(slices.Clone(pngSignature), "the rest of the image"...)
	go serveImageFirst(l, image)

	lv, err := DialLibvirt(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lv.Close()
	var got bytes.Buffer
	if _, err := lv.Screenshot("web", &got); err != nil || !bytes.Equal(got.Bytes(), image) {
		t.Fatalf("got %q, %v; want %q", got.Bytes(), err, image)
	}
}

// serveImageFirst answers one connection as libvirtd does, except that a screenshot's image,
// in two frames and the stream's end, comes before the call's reply.
func serveImageFirst(l net.Listener, image []byte) {
	conn, err := l.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	be := binary.BigEndian
	name := []byte{0, 0, 0, 3, 'w', 'e', 'b', 0}
	domain := append(append(name, make([]byte, uuidLen)...), 0, 0, 0, 1)
	for {
		var word [4]byte
		if _, err := io.ReadFull(conn, word[:]); err != nil {
			return
		}
		call := make([]byte, be.Uint32(word[:])-4)
		if _, err := io.ReadFull(conn, call); err != nil || len(call) < 24 {
			return
		}
		proc, serial := be.Uint32(call[8:]), be.Uint32(call[16:])
		var out [][]byte
		switch proc {
		case procAuthList:
			out = [][]byte{streamFrame(proc, typeReply, serial, statusOK, []byte{0, 0, 0, 0})}
		case procDomainLookupByName:
			out = [][]byte{streamFrame(proc, typeReply, serial, statusOK, domain)}
		case procDomainScreenshot:
			mime := []byte{0, 0, 0, 1, 0, 0, 0, 9, 'i', 'm', 'a', 'g', 'e', '/', 'p', 'n', 'g', 0, 0, 0}
			out = [][]byte{
				streamFrame(proc, typeStream, serial, statusContinue, image[:5]),
				streamFrame(proc, typeStream, serial, statusContinue, image[5:]),
				streamFrame(proc, typeStream, serial, statusOK, nil),
				streamFrame(proc, typeReply, serial, statusOK, mime),
			}
		default:
			out = [][]byte{streamFrame(proc, typeReply, serial, statusOK, nil)}
		}
		for _, f := range out {
			if _, err := conn.Write(f); err != nil {
				return
			}
		}
	}
}
