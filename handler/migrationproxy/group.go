package migrationproxy

import (
	"context"
	"errors"
	"io"
	"sync"
)

var errFull = errors.New("too many forwarded connections")

// group keeps a proxy's goroutines and connections, so that Close can tear down every
// forwarded connection at once (an aborted migration otherwise leaves QEMU's NBD client
// waiting forever) and return only once nothing of the proxy runs any more.
type group struct {
	ctx    context.Context // done once shut: cancels dials and handshakes
	cancel context.CancelFunc

	mu       sync.Mutex
	shutting bool
	sessions int
	conns    map[io.Closer]struct{}
	wg       sync.WaitGroup
}

func newGroup() *group {
	ctx, cancel := context.WithCancel(context.Background())
	return &group{ctx: ctx, cancel: cancel, conns: map[io.Closer]struct{}{}}
}

// run runs f in a goroutine that shut waits for, unless the group is shut already.
func (g *group) run(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shutting {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// start serves an accepted connection c in a new session: serve runs in its own goroutine and
// c is closed when it returns. When the group is shut or full, c is closed at once instead.
func (g *group) start(c io.Closer, serve func()) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shutting {
		c.Close()
		return context.Canceled
	}
	if g.sessions >= maxConns {
		c.Close()
		return errFull
	}
	g.sessions++
	g.conns[c] = struct{}{}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer g.endSession()
		defer g.drop(c)
		serve()
	}()
	return nil
}

func (g *group) endSession() {
	g.mu.Lock()
	g.sessions--
	g.mu.Unlock()
}

// add tracks a further connection of a running session, to be closed by shut; when the
// group is shut already, it closes c and says false.
func (g *group) add(c io.Closer) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shutting {
		c.Close()
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

// drop closes c and forgets it.
func (g *group) drop(c io.Closer) {
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
	c.Close()
}

// shut closes every tracked connection, so that every copy fails at once, and waits for the
// group's goroutines. Their listeners must be closed first, or an accept loop may not end.
func (g *group) shut() {
	g.cancel()
	g.mu.Lock()
	g.shutting = true
	for c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}
