package migrationproxy

import (
	"io"
	"net"
)

type closeWriter interface{ CloseWrite() error }

// splice copies between a and b both ways until both directions have ended. A direction that
// reaches end of stream half-closes its destination, so that the far end sees the EOF while
// the other direction goes on (NBD and the migration stream both rely on that). A direction
// that fails calls stop, which must close the transports: the other direction could
// otherwise wait for ever on a peer that will never be told anything.
func splice(a, b net.Conn, stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		oneWay(a, b, stop)
	}()
	oneWay(b, a, stop)
	<-done
}

func oneWay(dst, src net.Conn, stop func()) {
	if _, err := io.Copy(dst, src); err != nil {
		stop()
		return
	}
	cw, ok := dst.(closeWriter)
	if !ok || cw.CloseWrite() != nil {
		stop()
	}
}
