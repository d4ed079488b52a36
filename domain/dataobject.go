package domain

import (
	"bytes"
	"fmt"
	"hash/crc32"
)

// A data object holds committed records of one or more streams, laid out for
// reads: a checksummed index, then one frame per stream. The index says
// where each stream's frame is, so a reader fetches only its own range.
//
// The magic is the format version. PDO2 adds the writer sequence to each
// section of the index; PDO1 objects, written before, still decode (with no
// writer sequence). New objects are always PDO2.
var (
	dataMagicV1 = []byte("PDO1")
	dataMagicV2 = []byte("PDO2")
)

// DataHeaderSize is enough to read the fixed part of a data object's start:
// magic, index length and index CRC.
const DataHeaderSize = 12

// Section is one stream's part of a data object.
type Section struct {
	Stream, Epoch, Start, End uint64
	// Offset and Length locate the section's frame within the object.
	Offset, Length uint64
	// Producers is the stream's idempotent-producer state as of End, so it
	// outlives the WAL objects it was first written in.
	Producers []ProducerState
	// WriterSeq is the stream's last accepted writer sequence as of End
	// ("" for none, and in PDO1 objects), kept for the same reason.
	WriterSeq string
}

// SectionState is the stream state a section carries besides its records:
// what a new writer of the stream restores from its last section.
type SectionState struct {
	Producers []ProducerState
	WriterSeq string
}

// ProducerState is one producer's dedup state: its last sequence and where
// that append landed.
type ProducerState struct {
	ID          string
	Epoch, Seq  uint64
	First, Next uint64
}

// DataKey is the object-store key of data object id.
func DataKey(id uint64) string { return fmt.Sprintf("data/%020d", id) }

// EncodeDataObject lays out frames (one per stream, consecutive records)
// with each stream's state as of its frame's end (states[i] for frames[i];
// missing entries are empty), and returns the object and its sections.
func EncodeDataObject(frames []Frame, states []SectionState) ([]byte, []Section) {
	return AppendDataObject(nil, frames, states)
}

// AppendDataObject is EncodeDataObject appending the object to dst, so that
// a writer can reuse one buffer; section offsets count from the object's
// start.
func AppendDataObject(dst []byte, frames []Frame, states []SectionState) ([]byte, []Section) {
	secs := make([]Section, len(frames))
	size := 0
	for i := range frames {
		f := &frames[i]
		secs[i] = Section{Stream: f.Stream, Epoch: f.Epoch, Start: f.Offset, End: f.End()}
		if i < len(states) {
			secs[i].Producers, secs[i].WriterSeq = states[i].Producers, states[i].WriterSeq
		}
		size += 8 + frameSizeHint(f)
	}
	// Offsets and lengths are fixed-width, so the index's length is known
	// before the frames are written: they go straight after it, and record
	// bodies are copied once.
	indexLen := len(encodeIndex(secs))
	base := len(dst)
	out := growFresh(dst, DataHeaderSize+indexLen+size)[:base+DataHeaderSize+indexLen]
	for i := range frames {
		start := len(out)
		out = AppendFrame(out, &frames[i])
		secs[i].Offset, secs[i].Length = uint64(start-base), uint64(len(out)-start)
	}
	index := encodeIndex(secs)
	obj := out[base:]
	copy(obj, dataMagicV2)
	putU32(obj[4:], uint32(len(index)))
	putU32(obj[8:], crc32.Checksum(index, castagnoli))
	copy(obj[DataHeaderSize:], index)
	return out, secs
}

// growFresh is slices.Grow for a reused buffer: when dst lacks room for n
// more bytes it copies only dst's contents, not every byte of its old
// capacity, which for a data object buffer is the last, megabytes-long,
// object. A quarter more room lets the next, slightly larger, object fit.
func growFresh(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	grown := make([]byte, len(dst), len(dst)+n+n/4)
	copy(grown, dst)
	return grown
}

func encodeIndex(secs []Section) []byte {
	e := &encoder{}
	e.uvarint(uint64(len(secs)))
	for _, s := range secs {
		for _, v := range []uint64{s.Stream, s.Epoch, s.Start, s.End} {
			e.uvarint(v)
		}
		e.buf = appendU64(e.buf, s.Offset)
		e.buf = appendU64(e.buf, s.Length)
		e.uvarint(uint64(len(s.Producers)))
		for _, p := range s.Producers {
			e.str(p.ID)
			for _, v := range []uint64{p.Epoch, p.Seq, p.First, p.Next} {
				e.uvarint(v)
			}
		}
		e.str(s.WriterSeq)
	}
	return e.buf
}

// dataVersion returns the format version an object's magic names, or 0.
func dataVersion(head []byte) int {
	switch {
	case len(head) < DataHeaderSize:
		return 0
	case bytes.Equal(head[:4], dataMagicV1):
		return 1
	case bytes.Equal(head[:4], dataMagicV2):
		return 2
	}
	return 0
}

// DataIndexLength reads the index length from an object's first
// DataHeaderSize bytes; the index ends at DataHeaderSize+length.
func DataIndexLength(head []byte) (int, error) {
	if dataVersion(head) == 0 {
		return 0, fmt.Errorf("%w: not a data object", ErrDecode)
	}
	return int(readU32(head[4:])), nil
}

// DecodeDataIndex decodes the sections from an object's first
// DataHeaderSize+index length bytes.
func DecodeDataIndex(b []byte) ([]Section, error) {
	n, err := DataIndexLength(b)
	if err != nil {
		return nil, err
	}
	if len(b) < DataHeaderSize+n {
		return nil, fmt.Errorf("%w: data index truncated", ErrDecode)
	}
	index := b[DataHeaderSize : DataHeaderSize+n]
	if crc32.Checksum(index, castagnoli) != readU32(b[8:]) {
		return nil, ErrChecksum
	}
	version := dataVersion(b)
	d := &decoder{buf: index}
	count := d.count(20)
	secs := make([]Section, 0, count)
	for i := 0; i < count && d.err == nil; i++ {
		s := Section{Stream: d.uvarint(), Epoch: d.uvarint(), Start: d.uvarint(), End: d.uvarint(),
			Offset: d.u64(), Length: d.u64()}
		for j := d.count(5); j > 0 && d.err == nil; j-- {
			s.Producers = append(s.Producers, ProducerState{ID: d.str(), Epoch: d.uvarint(), Seq: d.uvarint(),
				First: d.uvarint(), Next: d.uvarint()})
		}
		if version >= 2 {
			s.WriterSeq = d.str()
		}
		secs = append(secs, s)
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return secs, nil
}

func appendU64(b []byte, v uint64) []byte {
	return appendU32(appendU32(b, uint32(v)), uint32(v>>32))
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.buf) < 8 {
		d.fail("truncated")
		return 0
	}
	v := uint64(readU32(d.buf)) | uint64(readU32(d.buf[4:]))<<32
	d.buf = d.buf[8:]
	return v
}
