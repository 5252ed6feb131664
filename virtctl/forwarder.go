package virtctl

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/vmctl/vmctl/pkg/handlerapi"
)

// forwarder relays the connections of one local port to remote on t's guest.
type forwarder struct {
	ctx    context.Context
	c      *clients
	t      target
	remote int
	errOut io.Writer
}

// serveTCP opens a stream per accepted connection.
func (f *forwarder) serveTCP(l net.Listener) {
	for {
		local, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer local.Close()
			conn, err := openPortForward(f.ctx, f.c, f.t, f.remote, handlerapi.TCP)
			if err != nil {
				fmt.Fprintln(f.errOut, err)
				return
			}
			stream := &handlerapi.WebsocketStream{Conn: conn}
			_ = handlerapi.Splice(stream, local)
			_ = stream.Close("")
		}()
	}
}

// serveUDP opens a stream per client address: each datagram is a websocket message, each
// message from the guest a datagram back to the client it came for.
func (f *forwarder) serveUDP(pc net.PacketConn) {
	var mu sync.Mutex
	streams := map[string]*handlerapi.WebsocketStream{}
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		mu.Lock()
		stream := streams[from.String()]
		mu.Unlock()
		if stream == nil {
			conn, err := openPortForward(f.ctx, f.c, f.t, f.remote, handlerapi.UDP)
			if err != nil {
				fmt.Fprintln(f.errOut, err)
				continue
			}
			stream = &handlerapi.WebsocketStream{Conn: conn}
			mu.Lock()
			streams[from.String()] = stream
			mu.Unlock()
			go func() {
				defer func() {
					mu.Lock()
					delete(streams, from.String())
					mu.Unlock()
					_ = stream.Close("")
				}()
				for {
					_, data, err := conn.ReadMessage()
					if err != nil {
						return
					}
					if _, err := pc.WriteTo(data, from); err != nil {
						return
					}
				}
			}()
		}
		if _, err := stream.Write(buf[:n]); err != nil {
			fmt.Fprintln(f.errOut, err)
		}
	}
}
