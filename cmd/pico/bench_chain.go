package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
)

// A bench record verifies itself. Its text starts with a header of
// fixed width, "pb1:" then hexadecimal writer, seq, send time (Unix ns)
// and chain, each followed by a colon, and is filled to the record size
// with 'x'. The chain hashes the previous record's chain of the same
// writer and stream, the header before it and the filler, so a reader
// finds any record dropped, repeated, reordered or changed.
const (
	chainMagic  = "pb1:"
	writerAt    = len(chainMagic) // each field is followed by a colon
	seqAt       = writerAt + 8 + 1
	sentAt      = seqAt + 16 + 1
	chainAt     = sentAt + 16 + 1
	chainHeader = chainAt + 16 + 1 // 64
)

// chainRecordSize is the least record size that carries the header, with
// room for a JSON string's quotes if quoted.
func chainRecordSize(quoted bool) int {
	if quoted {
		return chainHeader + 2
	}
	return chainHeader
}

// chainLink is where one writer's chain on one stream stands: the next
// seq and the last chain.
type chainLink struct {
	next  uint64
	chain uint64
}

// stamp writes the header of writer's next record on link into text
// (the record without a JSON string's quotes), sent at sent.
func (l *chainLink) stamp(text []byte, writer uint32, sent time.Time) {
	copy(text, chainMagic)
	putHex(text[writerAt:seqAt], uint64(writer))
	putHex(text[seqAt:sentAt], l.next)
	putHex(text[sentAt:chainAt], uint64(sent.UnixNano()))
	l.chain = chainOf(l.chain, text)
	putHex(text[chainAt:chainHeader], l.chain)
	l.next++
}

// putHex writes v in hexadecimal into field, all of it but its last
// byte, which is the colon after it.
func putHex(field []byte, v uint64) {
	for i := len(field) - 2; i >= 0; i-- {
		field[i] = "0123456789abcdef"[v&0xf]
		v >>= 4
	}
	field[len(field)-1] = ':'
}

func chainOf(prev uint64, text []byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	var p [8]byte
	binary.LittleEndian.PutUint64(p[:], prev)
	_, _ = d.Write(p[:])
	_, _ = d.Write(text[:chainAt])
	_, _ = d.Write(text[chainHeader:])
	return d.Sum64()
}

// chainCheck is one reader's view of one stream: where each writer's
// chain stands.
type chainCheck struct {
	size    int // the record's length
	quoted  bool
	writers map[uint32]*chainLink
}

func newChainCheck(size int, quoted bool) *chainCheck {
	return &chainCheck{size: size, quoted: quoted, writers: map[uint32]*chainLink{}}
}

// errIntegrity marks what a reader found wrong.
var errIntegrity = errors.New("integrity check failed")

// check verifies the next record read, returning its writer, seq and
// send time.
func (c *chainCheck) check(rec []byte) (writer uint32, seq uint64, sent time.Time, err error) {
	text, ok := c.text(rec)
	if !ok {
		return 0, 0, time.Time{}, fmt.Errorf("%w: a record of %d bytes is corrupt (want %d bytes starting %q)", errIntegrity, len(rec), c.size, chainMagic)
	}
	w, err1 := strconv.ParseUint(string(text[writerAt:seqAt-1]), 16, 32)
	s, err2 := strconv.ParseUint(string(text[seqAt:sentAt-1]), 16, 64)
	t, err3 := strconv.ParseUint(string(text[sentAt:chainAt-1]), 16, 64)
	ch, err4 := strconv.ParseUint(string(text[chainAt:chainHeader-1]), 16, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("%w: a record's header is corrupt: %v", errIntegrity, err)
	}
	writer, seq = uint32(w), s
	l := c.writers[writer]
	if l == nil {
		l = &chainLink{}
		c.writers[writer] = l
	}
	switch {
	case seq < l.next:
		return writer, seq, time.Time{}, fmt.Errorf("%w: writer %d's record %d came again after record %d (a duplicate)", errIntegrity, writer, seq, l.next-1)
	case seq > l.next:
		return writer, seq, time.Time{}, fmt.Errorf("%w: writer %d's record %d came where record %d should have (missing or reordered)", errIntegrity, writer, seq, l.next)
	case chainOf(l.chain, text) != ch:
		return writer, seq, time.Time{}, fmt.Errorf("%w: writer %d's record %d is corrupt (its chain does not match)", errIntegrity, writer, seq)
	}
	l.next, l.chain = seq+1, ch
	return writer, seq, time.Unix(0, int64(t)), nil
}

// text is the record without a JSON string's quotes, if it is shaped as
// a bench record.
func (c *chainCheck) text(rec []byte) ([]byte, bool) {
	if len(rec) != c.size {
		return nil, false
	}
	if c.quoted {
		if rec[0] != '"' || rec[len(rec)-1] != '"' {
			return nil, false
		}
		rec = rec[1 : len(rec)-1]
	}
	return rec, len(rec) >= chainHeader && string(rec[:len(chainMagic)]) == chainMagic
}

// missing compares where each writer's chain stands with the records the
// writers had acknowledged (acked[w] for writer w), returning the first
// shortfall.
func (c *chainCheck) missing(acked []uint64) error {
	for w, n := range acked {
		seen := uint64(0)
		if got := c.writers[uint32(w)]; got != nil {
			seen = got.next
		}
		if seen < n {
			return fmt.Errorf("%w: writer %d had %d records acknowledged, a reader saw %d (missing at the end)", errIntegrity, w, n, seen)
		}
	}
	return nil
}
