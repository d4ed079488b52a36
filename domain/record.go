package domain

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// Record is one stored record. It belongs to neither wire protocol: the Pico
// and Durable Streams listeners both read and write this shape.
type Record struct {
	// TimestampMs is assigned by the stream's owner, monotonic per stream.
	TimestampMs int64
	// Key is the record's key, bytes of the writer's choosing: nil for
	// none. An empty, non-nil key is a key (the Pico protocol tells the
	// two apart).
	Key     []byte
	Headers []Header
	Body    []byte
}

// Header is one record header: a name, and a value of any bytes.
type Header struct {
	Key, Value string
}

// Keyed reports whether any of records has a key.
func Keyed(records []Record) bool {
	for i := range records {
		if records[i].Key != nil {
			return true
		}
	}
	return false
}

// ProducerStamp identifies an idempotent producer's append. It travels inside
// the WAL frame with the records it guards, so dedup state becomes durable
// exactly when the data does.
type ProducerStamp struct {
	ID    string
	Epoch uint64
	Seq   uint64
}

// Clone copies p (nil stays nil), so a state that keeps a stamp does not
// share the request's.
func (p *ProducerStamp) Clone() *ProducerStamp {
	if p == nil {
		return nil
	}
	stamp := *p
	return &stamp
}

// Frame is one append of consecutive records to one stream, as written to the
// WAL: records [Offset, Offset+len(Records)) written at stream epoch Epoch.
type Frame struct {
	Stream   uint64
	Epoch    uint64
	Offset   uint64
	Producer *ProducerStamp
	// WriterSeq is the append's writer sequence (Durable Streams
	// Stream-Seq), "" for none. Like the producer stamp it rides with the
	// records, so it is durable exactly when they are.
	WriterSeq string
	// Seals: the append closes the stream with these records, the last
	// it takes. A takeover that finds the frame records the seal, so the
	// records and the closure are durable together.
	Seals   bool
	Records []Record
}

// End returns the offset after the frame's last record.
func (f *Frame) End() uint64 { return f.Offset + uint64(len(f.Records)) }

// Size returns the bytes the frame's record bodies and headers take, the
// measure used for memory and bulk bounds.
func (f *Frame) Size() int {
	n := 0
	for i := range f.Records {
		n += f.Records[i].Size()
	}
	return n
}

// Size returns the bytes the record's body and headers take, by the
// measure of Frame.Size.
func (r *Record) Size() int {
	n := len(r.Body) + len(r.Key) + 16
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// ErrChecksum marks a frame whose CRC does not match its bytes.
var ErrChecksum = errors.New("domain: checksum mismatch")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Bits of a frame's flags byte: which optional fields follow it. The byte
// was a 0/1 producer presence flag before writer sequences, so older frames
// decode unchanged.
const (
	frameHasProducer  = 1 << 0
	frameHasWriterSeq = 1 << 1
	frameSeals        = 1 << 2 // written from LevelSealFrames on
	frameKeyed        = 1 << 3 // records carry keys; from LevelRecordKeys on
	frameKnownFlags   = frameHasProducer | frameHasWriterSeq | frameSeals | frameKeyed
)

// AppendFrame appends f's framed encoding to b: u32 body length, u32 CRC-32C
// of the body, body. The body is encoded in place after a reserved header
// (record bodies are copied once, into b), and b grows once for the frame.
func AppendFrame(b []byte, f *Frame) []byte {
	start := len(b)
	b = slices.Grow(b, 8+frameSizeHint(f))
	e := &encoder{buf: append(b, 0, 0, 0, 0, 0, 0, 0, 0)}
	e.uvarint(f.Stream)
	e.uvarint(f.Epoch)
	e.uvarint(f.Offset)
	e.u8(frameFlags(f))
	if p := f.Producer; p != nil {
		e.str(p.ID)
		e.uvarint(p.Epoch)
		e.uvarint(p.Seq)
	}
	if f.WriterSeq != "" {
		e.str(f.WriterSeq)
	}
	keyed := Keyed(f.Records)
	e.uvarint(uint64(len(f.Records)))
	for i := range f.Records {
		appendRecord(e, &f.Records[i], keyed)
	}
	b = e.buf
	body := b[start+8:]
	putU32(b[start:], uint32(len(body)))
	putU32(b[start+4:], crc32.Checksum(body, castagnoli))
	return b
}

// frameSizeHint is about the encoded size of f's body, a little above so
// that encoding does not grow the buffer again.
func frameSizeHint(f *Frame) int {
	n := 64 + len(f.WriterSeq)
	if f.Producer != nil {
		n += len(f.Producer.ID)
	}
	for i := range f.Records {
		r := &f.Records[i]
		n += len(r.Body) + len(r.Key) + 3*binary.MaxVarintLen64
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value) + 2*binary.MaxVarintLen64
		}
	}
	return n
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func frameFlags(f *Frame) uint8 {
	var flags uint8
	if f.Producer != nil {
		flags |= frameHasProducer
	}
	if f.WriterSeq != "" {
		flags |= frameHasWriterSeq
	}
	if f.Seals {
		flags |= frameSeals
	}
	if Keyed(f.Records) {
		flags |= frameKeyed
	}
	return flags
}

// appendRecord encodes r; in a keyed frame each record starts its fields
// with uvarint(len(key)+1), 0 for no key. A frame without keys is laid out
// as before keys existed, so older nodes read it.
func appendRecord(e *encoder, r *Record, keyed bool) {
	e.varint(r.TimestampMs)
	if keyed {
		e.key(r.Key)
	}
	e.uvarint(uint64(len(r.Headers)))
	for _, h := range r.Headers {
		e.str(h.Key)
		e.str(h.Value)
	}
	e.bytes(r.Body)
}

// DecodeFrame decodes one framed frame from the start of b and returns it
// with the bytes consumed. Lengths and counts are bounded by the bytes
// present; a CRC mismatch is ErrChecksum. Record bodies alias b (no copy:
// replay reads gigabytes), so the caller must not modify b afterwards.
func DecodeFrame(b []byte) (Frame, int, error) {
	if len(b) < 8 {
		return Frame{}, 0, fmt.Errorf("%w: frame header truncated", ErrDecode)
	}
	n, sum := readU32(b), readU32(b[4:])
	if uint64(n) > uint64(len(b)-8) {
		return Frame{}, 0, fmt.Errorf("%w: frame of %d bytes, %d left", ErrDecode, n, len(b)-8)
	}
	body := b[8 : 8+n]
	if crc32.Checksum(body, castagnoli) != sum {
		return Frame{}, 0, ErrChecksum
	}
	d := &decoder{buf: body, alias: true}
	f := Frame{Stream: d.uvarint(), Epoch: d.uvarint(), Offset: d.uvarint()}
	keyed := decodeFrameOptions(d, &f)
	count := d.count(3)
	if count > 0 {
		f.Records = make([]Record, count)
	}
	for i := 0; i < count && d.err == nil; i++ {
		f.Records[i] = decodeRecord(d, keyed)
	}
	if err := d.finish(); err != nil {
		return Frame{}, 0, err
	}
	if f.Offset+uint64(count) < f.Offset {
		return Frame{}, 0, fmt.Errorf("%w: frame offsets overflow", ErrDecode)
	}
	return f, 8 + int(n), nil
}

// decodeFrameOptions reads the flags byte and the optional fields it
// announces. Unknown bits are refused rather than skipped: they would mean
// fields this version cannot place. It reports whether records carry keys.
func decodeFrameOptions(d *decoder, f *Frame) bool {
	flags := d.u8()
	if flags&^frameKnownFlags != 0 {
		d.fail("unknown frame flags %#x", flags)
		return false
	}
	if flags&frameHasProducer != 0 {
		f.Producer = &ProducerStamp{ID: d.str(), Epoch: d.uvarint(), Seq: d.uvarint()}
	}
	if flags&frameHasWriterSeq != 0 {
		if f.WriterSeq = d.str(); f.WriterSeq == "" && d.err == nil {
			d.fail("empty writer sequence") // one encoding per frame: "" is no flag
		}
	}
	f.Seals = flags&frameSeals != 0
	return flags&frameKeyed != 0
}

func decodeRecord(d *decoder, keyed bool) Record {
	r := Record{TimestampMs: d.varint()}
	if keyed {
		r.Key = d.key()
	}
	if n := d.count(2); n > 0 {
		r.Headers = make([]Header, n)
		for i := range r.Headers {
			r.Headers[i] = Header{Key: d.str(), Value: d.str()}
		}
	}
	r.Body = d.bytes()
	return r
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func readU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// key encodes a record key as uvarint(len+1), so that 0 is no key and 1 the
// empty one.
func (e *encoder) key(k []byte) {
	if k == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(k)) + 1)
	e.buf = append(e.buf, k...)
}

// key decodes what encoder.key wrote; an empty key is a non-nil slice.
func (d *decoder) key() []byte {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	n--
	if n > uint64(len(d.buf)) {
		d.fail("key length %d exceeds the %d bytes left", n, len(d.buf))
		return nil
	}
	k := d.buf[:n:n]
	if !d.alias {
		k = append([]byte{}, k...)
	}
	d.buf = d.buf[n:]
	return k
}
