package domain

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// RowVersion is the version byte that starts every encoded row.
const RowVersion = 1

// MaxRowCommands bounds the commands in one row (the proposer groups up to 1024).
const MaxRowCommands = 4096

// ErrDecode is wrapped by every decoding failure.
var ErrDecode = errors.New("domain: malformed encoding")

// EncodeRow encodes a batch of commands as one log row payload:
// version byte, uvarint count, then per command uvarint code, uvarint body
// length and the body.
func EncodeRow(cmds []Command) []byte {
	e := &encoder{buf: make([]byte, 0, 64*len(cmds)+8)}
	e.buf = append(e.buf, RowVersion)
	e.uvarint(uint64(len(cmds)))
	var body encoder
	for _, c := range cmds {
		body.buf = body.buf[:0]
		c.encode(&body)
		e.uvarint(uint64(c.Code()))
		e.bytes(body.buf)
	}
	return e.buf
}

// EncodeCommand encodes a single command as a one-command row.
func EncodeCommand(c Command) []byte { return EncodeRow([]Command{c}) }

// DecodeRow decodes a row payload. Unknown versions or codes, truncation and
// trailing bytes are errors: a node must stop rather than guess.
func DecodeRow(b []byte) ([]Command, error) {
	d := &decoder{buf: b}
	if v := d.u8(); d.err == nil && v != RowVersion {
		return nil, fmt.Errorf("%w: row version %d", ErrDecode, v)
	}
	n := d.count(2)
	if n > MaxRowCommands {
		return nil, fmt.Errorf("%w: %d commands in a row", ErrDecode, n)
	}
	cmds := make([]Command, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		code := Code(d.uvarint())
		body := d.bytes()
		if d.err != nil {
			break
		}
		c := newCommand(code)
		if c == nil {
			return nil, fmt.Errorf("%w: unknown command code %d (a newer pico wrote it: upgrade this node)", ErrDecode, code)
		}
		bd := &decoder{buf: body}
		c.decode(bd)
		if err := bd.finish(); err != nil {
			return nil, fmt.Errorf("command %d (code %d): %w", i, code, err)
		}
		cmds = append(cmds, c)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return cmds, nil
}

func newCommand(c Code) Command {
	switch c {
	case CodeRegisterNode:
		return &RegisterNode{}
	case CodeSetSlots:
		return &SetSlots{}
	case CodeCreateStream:
		return &CreateStream{}
	case CodePlaceStream:
		return &PlaceStream{}
	case CodeOpenStream:
		return &OpenStream{}
	case CodeCloseStream:
		return &CloseStream{}
	case CodeSetStreamMeta:
		return &SetStreamMeta{}
	case CodeTrimStream:
		return &TrimStream{}
	case CodeDeleteStream:
		return &DeleteStream{}
	case CodeReserveObjects:
		return &ReserveObjects{}
	case CodeCommitObjects:
		return &CommitObjects{}
	case CodeCompactObjects:
		return &CompactObjects{}
	case CodeStartTransfer:
		return &StartTransfer{}
	case CodeCompleteTransfer:
		return &CompleteTransfer{}
	case CodeExpireReservations:
		return &ExpireReservations{}
	case CodeDestroyObjects:
		return &DestroyObjects{}
	case CodePutKV:
		return &PutKV{}
	case CodePutKVIf:
		return &PutKVIf{}
	case CodeDeleteKV:
		return &DeleteKV{}
	case CodeDeleteKVIf:
		return &DeleteKVIf{}
	case CodeFenceNode:
		return &FenceNode{}
	case CodeSealStream:
		return &SealStream{}
	case CodeCreateFork:
		return &CreateFork{}
	case CodeRecoveredStream:
		return &RecoveredStream{}
	case CodeSealStreamBy:
		return &SealStreamBy{}
	}
	return nil
}

// AllCodes lists every command code in order; tests use it to check that each
// has a golden file and that codes.txt matches.
func AllCodes() []Code {
	var codes []Code
	for c := Code(1); newCommand(c) != nil; c++ {
		codes = append(codes, c)
	}
	return codes
}

// NewCommand returns a zero command for code, or nil if the code is unknown.
func NewCommand(c Code) Command { return newCommand(c) }

type encoder struct{ buf []byte }

func (e *encoder) u8(v uint8)          { e.buf = append(e.buf, v) }
func (e *encoder) uvarint(v uint64)    { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)      { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) bytes(b []byte)      { e.uvarint(uint64(len(b))); e.buf = append(e.buf, b...) }
func (e *encoder) str(s string)        { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) node(n NodeID)       { e.uvarint(uint64(n)) }
func (e *encoder) proposer(p Proposer) { e.node(p.Node); e.uvarint(p.Epoch) }

// stamp encodes an optional producer stamp: whether there is one, then it.
func (e *encoder) stamp(p *ProducerStamp) {
	e.boolean(p != nil)
	if p != nil {
		e.str(p.ID)
		e.uvarint(p.Epoch)
		e.uvarint(p.Seq)
	}
}

func (e *encoder) boolean(b bool) {
	if b {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *encoder) ids(ids []uint64) {
	e.uvarint(uint64(len(ids)))
	for _, id := range ids {
		e.uvarint(id)
	}
}

// decoder reads bounded fields; the first error sticks and later reads return
// zero values, so decode functions need no error checks of their own.
type decoder struct {
	buf []byte
	err error
	// alias: bytes() returns slices of buf instead of copies.
	alias bool
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrDecode}, args...)...)
	}
}

func (d *decoder) u8() uint8 {
	if d.err != nil || len(d.buf) < 1 {
		d.fail("truncated")
		return 0
	}
	v := d.buf[0]
	d.buf = d.buf[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) u32() uint32 {
	v := d.uvarint()
	if v > 1<<32-1 {
		d.fail("value %d overflows 32 bits", v)
		return 0
	}
	return uint32(v)
}

func (d *decoder) node() NodeID { return NodeID(d.u32()) }

func (d *decoder) proposer() Proposer {
	return Proposer{Node: d.node(), Epoch: d.uvarint()}
}

func (d *decoder) stamp() *ProducerStamp {
	if !d.boolean() {
		return nil
	}
	return &ProducerStamp{ID: d.str(), Epoch: d.uvarint(), Seq: d.uvarint()}
}

func (d *decoder) boolean() bool {
	switch d.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad bool")
	return false
}

// bytes returns a copy unless the decoder aliases, so decoded commands
// never alias the row buffer.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.fail("length %d exceeds the %d bytes left", n, len(d.buf))
		return nil
	}
	if n == 0 {
		return nil
	}
	b := d.buf[:n:n]
	if !d.alias {
		b = append([]byte(nil), b...)
	}
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) str() string { return string(d.bytes()) }

// count reads an element count, bounded by the bytes left assuming each
// element takes at least minSize bytes, so a hostile count cannot force a
// huge allocation.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.buf)/minSize) {
		d.fail("count %d exceeds the %d bytes left", n, len(d.buf))
		return 0
	}
	return int(n)
}

func (d *decoder) ids() []uint64 {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = d.uvarint()
	}
	return ids
}

func (d *decoder) finish() error {
	if d.err == nil && len(d.buf) != 0 {
		d.fail("%d trailing bytes", len(d.buf))
	}
	return d.err
}
