package downwardmetrics

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/klog/v2"
)

// The port's protocol, vhostmd's: a request line and a blank line; the answer ends with a
// blank line too.
const (
	request        = "GET /metrics/XML"
	invalidRequest = "INVALID REQUEST\n\n"
	// maxLine bounds what the launcher buffers of a request line the guest never ends.
	maxLine = 1024
)

// ServeChannel answers the guest's requests on its metrics port until ctx ends. QEMU
// listens on socket once the domain runs; the launcher connects, and connects again
// whenever QEMU closes the connection. Requests are answered at most once a second (the
// guest's rate is its own business, but not at the launcher's cost).
func ServeChannel(ctx context.Context, socket string, report func() []byte) {
	limit := rate.NewLimiter(1, 1)
	for ctx.Err() == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", socket)
		if err != nil {
			sleep(ctx, time.Second) // QEMU is not up yet
			continue
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		err = serve(ctx, conn, limit, report)
		stop()
		conn.Close()
		if ctx.Err() == nil && !errors.Is(err, io.EOF) {
			klog.InfoS("downward metrics port", "err", err)
		}
		sleep(ctx, time.Second)
	}
}

// serve answers requests on one connection until it fails.
func serve(ctx context.Context, conn net.Conn, limit *rate.Limiter, report func() []byte) error {
	r := bufio.NewReaderSize(conn, maxLine)
	for {
		line, err := readLine(r)
		if err != nil {
			return err
		}
		if line == "" {
			continue // the blank line after a request, or a stray one
		}
		if err := limit.Wait(ctx); err != nil {
			return err
		}
		answer := []byte(invalidRequest)
		if line == request {
			answer = append(report(), '\n')
		}
		if _, err := conn.Write(answer); err != nil {
			return err
		}
	}
}

// readLine reads one line without its end; a line longer than maxLine is read to its end
// and returned as what it is, not a request.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.ReadSlice('\n')
		}
		return "too long", err
	}
	if err != nil {
		return "", err
	}
	return string(bytes.TrimRight(line, "\r\n")), nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
