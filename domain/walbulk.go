package domain

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// A WAL object ("bulk") is one PUT: a header naming its writer and sequence,
// then frames back to back. A fence object sits at a sequence number the
// writer never filled; it ends the writer's WAL for good.
var (
	bulkMagic  = []byte("PWB1")
	fenceMagic = []byte("PWF1")
)

// BulkHeader identifies a WAL object: written by node at node epoch, the
// seq-th bulk of that process (from 1).
type BulkHeader struct {
	Node  NodeID
	Epoch uint64
	Seq   uint64
}

// AppendBulkHeader starts a bulk's encoding; frames follow (AppendFrame).
// The header carries its own CRC-32C, like every frame.
func AppendBulkHeader(b []byte, h BulkHeader) []byte {
	e := &encoder{}
	e.node(h.Node)
	e.uvarint(h.Epoch)
	e.uvarint(h.Seq)
	b = append(b, bulkMagic...)
	b = append(b, byte(len(e.buf)))
	b = appendU32(b, crc32.Checksum(e.buf, castagnoli))
	return append(b, e.buf...)
}

// EncodeFence returns the body of a fence object written by the fencer.
func EncodeFence(by Proposer) []byte {
	e := &encoder{buf: append([]byte(nil), fenceMagic...)}
	e.proposer(by)
	return e.buf
}

// IsFence reports whether an object body, or its first FenceProbeBytes, is
// a fence.
func IsFence(b []byte) bool { return bytes.HasPrefix(b, fenceMagic) }

// FenceProbeBytes is how much of an object IsFence needs.
const FenceProbeBytes = 4

// DecodeBulk decodes a WAL object into its header and frames. Any damage is
// an error: a bulk is written atomically, so a bad one was never valid.
func DecodeBulk(b []byte) (BulkHeader, []Frame, error) {
	if !bytes.HasPrefix(b, bulkMagic) {
		return BulkHeader{}, nil, fmt.Errorf("%w: not a WAL bulk", ErrDecode)
	}
	rest := b[len(bulkMagic):]
	if len(rest) < 5 || len(rest)-5 < int(rest[0]) {
		return BulkHeader{}, nil, fmt.Errorf("%w: bulk header truncated", ErrDecode)
	}
	n, sum := int(rest[0]), readU32(rest[1:])
	hb := rest[5 : 5+n]
	if crc32.Checksum(hb, castagnoli) != sum {
		return BulkHeader{}, nil, ErrChecksum
	}
	d := &decoder{buf: hb}
	h := BulkHeader{Node: d.node(), Epoch: d.uvarint(), Seq: d.uvarint()}
	if err := d.finish(); err != nil {
		return BulkHeader{}, nil, err
	}
	var frames []Frame
	rest = rest[5+n:]
	for len(rest) > 0 {
		f, n, err := DecodeFrame(rest)
		if err != nil {
			return BulkHeader{}, nil, fmt.Errorf("bulk %d frame %d: %w", h.Seq, len(frames), err)
		}
		frames = append(frames, f)
		rest = rest[n:]
	}
	return h, frames, nil
}

// WALPrefix is the key prefix of one node process's WAL objects.
func WALPrefix(node NodeID, epoch uint64) string {
	return fmt.Sprintf(WALRoot+"%010d/%020d/", node, epoch)
}

// WALKey is the key of bulk seq of a node process. Zero padding makes key
// order equal sequence order.
func WALKey(node NodeID, epoch, seq uint64) string {
	return fmt.Sprintf("%s%020d", WALPrefix(node, epoch), seq)
}

// WALRoot is the prefix of every WAL key.
const WALRoot = "wal/"

// ParseWALKey returns the node process and sequence number of a WAL key.
func ParseWALKey(key string) (p Proposer, seq uint64, ok bool) {
	rest, ok := strings.CutPrefix(key, WALRoot)
	if !ok || len(rest) != 10+1+20+1+20 || rest[10] != '/' || rest[31] != '/' {
		return Proposer{}, 0, false
	}
	node, err1 := strconv.ParseUint(rest[:10], 10, 32)
	epoch, err2 := strconv.ParseUint(rest[11:31], 10, 64)
	seq, err3 := strconv.ParseUint(rest[32:], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Proposer{}, 0, false
	}
	return Proposer{Node: NodeID(node), Epoch: epoch}, seq, true
}

// ParseWALSeq returns the sequence number of a key under prefix.
func ParseWALSeq(prefix, key string) (uint64, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || len(rest) != 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(rest, 10, 64)
	return v, err == nil
}
