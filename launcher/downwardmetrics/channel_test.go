package downwardmetrics

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestThePortAnswersRequests plays QEMU: it listens on the port's socket, as QEMU does,
// and writes what a guest writes into the port.
func TestThePortAnswersRequests(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "port.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go ServeChannel(ctx, socket, func() []byte { return []byte("<metrics></metrics>\n") })

	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, tc := range []struct{ request, want string }{
		{"GET /metrics/XML\n\n", "<metrics></metrics>\n\n"},
		{"PUT /metrics/XML\n\n", invalidRequest},
		{strings.Repeat("x", 3*maxLine) + "\n\n", invalidRequest},
		{"GET /metrics/XML\r\n\r\n", "<metrics></metrics>\n\n"},
	} {
		if _, err := conn.Write([]byte(tc.request)); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for !strings.HasSuffix(got.String(), "\n\n") {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%.20q: %v after %q", tc.request, err, got.String())
			}
			got.WriteString(line)
		}
		if got.String() != tc.want {
			t.Errorf("%.20q: got %q, want %q", tc.request, got.String(), tc.want)
		}
	}
}
