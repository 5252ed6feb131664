package handler

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// xdrCursor walks an XDR payload only to check that it is well formed: every count and length
// word fits in what is left, so a decoder that allocates by them allocates at most the frame.
// The first error sticks; later steps do nothing.
type xdrCursor struct {
	b   []byte
	err error
}

var errShort = errors.New("a length runs past the end of the frame")

// take consumes n bytes padded to a multiple of 4.
func (c *xdrCursor) take(n uint32) {
	if c.err != nil {
		return
	}
	padded := (uint64(n) + 3) &^ 3
	if padded > uint64(len(c.b)) {
		c.err = errShort
		return
	}
	c.b = c.b[padded:]
}

// uint reads one 4-byte word.
func (c *xdrCursor) uint() uint32 {
	if c.err != nil {
		return 0
	}
	if len(c.b) < 4 {
		c.err = errShort
		return 0
	}
	v := binary.BigEndian.Uint32(c.b)
	c.b = c.b[4:]
	return v
}

func (c *xdrCursor) word() { c.uint() }

// str is a variable-length string or opaque: its length, then its bytes.
func (c *xdrCursor) str() { c.take(c.uint()) }

// optional is a pointer: a boolean word, then the value when it is 1.
func (c *xdrCursor) optional(value func()) {
	switch c.uint() {
	case 0:
	case 1:
		value()
	default:
		if c.err == nil {
			c.err = errors.New("an optional value's flag is neither 0 nor 1")
		}
	}
}

// array is a variable-length array of at most limit elements.
func (c *xdrCursor) array(limit uint32, elem func(*xdrCursor)) {
	n := c.uint()
	if c.err == nil && n > limit {
		c.err = errors.New("an array is longer than the protocol allows")
		return
	}
	for range n {
		elem(c)
	}
}

// domain is remote_nonnull_domain: name, UUID, ID.
func (c *xdrCursor) domain() {
	c.str()
	c.take(uuidLen)
	c.word()
}

// network is remote_nonnull_network: name, UUID.
func (c *xdrCursor) network() {
	c.str()
	c.take(uuidLen)
}

// typedParam is remote_typed_param: a field name and a value whose type its discriminant
// gives (VIR_TYPED_PARAM_INT ... VIR_TYPED_PARAM_STRING).
func (c *xdrCursor) typedParam() {
	c.str()
	switch t := c.uint(); t {
	case 1, 2, 6: // int, uint, boolean
		c.word()
	case 3, 4, 5: // long long, unsigned long long, double
		c.take(8)
	case 7: // string
		c.str()
	default:
		if c.err == nil {
			c.err = fmt.Errorf("a typed parameter of unknown type %d", t)
		}
	}
}
