package handlerapi

import (
	"io"
	"sync"

	"github.com/gorilla/websocket"
)

// WebsocketStream is a websocket as a byte stream: binary messages carry the bytes. Reads end
// with io.EOF when the peer closes.
type WebsocketStream struct {
	Conn    *websocket.Conn
	pending io.Reader
	mu      sync.Mutex // gorilla allows one concurrent writer
}

func (s *WebsocketStream) Read(p []byte) (int, error) {
	for {
		if s.pending != nil {
			n, err := s.pending.Read(p)
			if err != io.EOF || n > 0 {
				return n, nil
			}
			s.pending = nil
		}
		_, r, err := s.Conn.NextReader()
		if err != nil {
			return 0, io.EOF
		}
		s.pending = r
	}
}

func (s *WebsocketStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.Conn.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close sends a normal closure with reason (cut to what a close frame holds) and closes.
func (s *WebsocketStream) Close(reason string) error {
	if len(reason) > 120 {
		reason = reason[:120]
	}
	s.mu.Lock()
	_ = s.Conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, reason))
	s.mu.Unlock()
	return s.Conn.Close()
}

// Splice copies both ways between a and b until either direction ends, and returns that
// direction's error (nil for a clean end). The caller closes both, which ends the other copy.
func Splice(a, b io.ReadWriter) error {
	done := make(chan error, 2)
	go func() { _, err := io.Copy(a, b); done <- err }()
	go func() { _, err := io.Copy(b, a); done <- err }()
	return <-done
}
