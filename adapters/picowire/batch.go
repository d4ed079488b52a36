package picowire

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/picomq/pico/domain"
)

// batchVersion is the first byte of every binary batch and read response.
const batchVersion = 1

// Smallest encodings of the binary elements: a count read from the wire
// pre-sizes a slice only as far as the bytes left could hold.
const (
	minBatchRecord    = 4 + 4 + 4         // key_len, header_count, body_len
	minResponseRecord = 8 + 8 + 4 + 4 + 4 // seq, timestamp, key_len, header_count, body_len
	minBatchHeader    = 4 + 4             // name len, value len
	noKeyLen          = math.MaxUint32    // key_len -1: a record without a key
)

// EncodeBatch encodes records as a binary batch request body:
//
//	u8 version=1 | u32 count | count × record
//	record  = i32 key_len | key | u32 header_count | header_count × (name, value) | u32 body_len | body
//	name    = u32 len | UTF-8 bytes
//	value   = u32 len | bytes
//
// Integers are big-endian (the original server's layout). key_len is -1 for
// a record without a key (Key nil) and 0 for the empty key. Timestamps are
// not sent: the stream's owner assigns them. Headers keep their order,
// duplicates included; a name that is not UTF-8 makes a batch DecodeBatch
// rejects. It panics if a count or length does not fit in 32 bits (31 for
// a key), which no bounded caller can reach.
func EncodeBatch(records []domain.Record) []byte {
	size := 1 + 4
	for i := range records {
		size += recordSize(&records[i])
	}
	b := make([]byte, 0, size)
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint32(b, wireLen(len(records), math.MaxUint32))
	for i := range records {
		b = appendBatchRecord(b, &records[i])
	}
	return b
}

// DecodeBatch decodes a binary batch request body. Bodies and keys alias b.
// It rejects an unknown version, a count of 0 or over the limit, more
// headers than the limit, truncation, lengths past the end, a key length
// below -1, header names that are not UTF-8, and trailing bytes. Decoded
// records have no timestamp, no Headers slice when they have none, a nil
// Body when it is empty, a nil Key when they have none and an empty non-nil
// one for the empty key.
func DecodeBatch(b []byte, lim BatchLimits) ([]domain.Record, error) {
	r := batchReader{rest: b, record: -1, what: "batch"}
	count := r.start(lim.MaxRecords)
	if r.err == nil && count == 0 {
		return nil, malformed("empty batch")
	}
	records := make([]domain.Record, 0, min(count, len(r.rest)/minBatchRecord))
	for i := 0; i < count && r.err == nil; i++ {
		r.record = i
		records = append(records, r.recordTail(lim.MaxHeaders))
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return records, nil
}

// EncodeBatchResponse encodes records as a binary read response:
//
//	u8 version=1 | u32 count | count × (u64 seq | i64 timestamp_ms | record)
//
// record is laid out as in EncodeBatch. It panics where
// EncodeBatch does.
func EncodeBatchResponse(records []SeqRecord) []byte {
	size := 1 + 4
	for i := range records {
		size += 8 + 8 + recordSize(&records[i].Record) // seq, timestamp
	}
	b := make([]byte, 0, size)
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint32(b, wireLen(len(records), math.MaxUint32))
	for i := range records {
		b = appendResponseRecord(b, records[i].Seq, &records[i].Record)
	}
	return b
}

// AppendBatchResponse appends to b the binary read response of records,
// the first at seq from: EncodeBatchResponse without a copy of the page.
func AppendBatchResponse(b []byte, from uint64, records []domain.Record) []byte {
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint32(b, wireLen(len(records), math.MaxUint32))
	for i := range records {
		b = appendResponseRecord(b, from+uint64(i), &records[i])
	}
	return b
}

func appendResponseRecord(b []byte, seq uint64, r *domain.Record) []byte {
	b = binary.BigEndian.AppendUint64(b, seq)
	b = binary.BigEndian.AppendUint64(b, uint64(r.TimestampMs))
	return appendBatchRecord(b, r)
}

// DecodeBatchResponse decodes a binary read response (used by clients). It
// checks what DecodeBatch does, except that an empty page is valid.
func DecodeBatchResponse(b []byte, lim BatchLimits) ([]SeqRecord, error) {
	r := batchReader{rest: b, record: -1, what: "response"}
	count := r.start(lim.MaxRecords)
	records := make([]SeqRecord, 0, min(count, len(r.rest)/minResponseRecord))
	for i := 0; i < count && r.err == nil; i++ {
		r.record = i
		seq := r.u64("seq")
		ts := int64(r.u64("timestamp"))
		rec := r.recordTail(lim.MaxHeaders)
		rec.TimestampMs = ts
		records = append(records, SeqRecord{Seq: seq, Record: rec})
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return records, nil
}

func appendBatchRecord(b []byte, r *domain.Record) []byte {
	if r.Key == nil {
		b = binary.BigEndian.AppendUint32(b, noKeyLen)
	} else {
		b = binary.BigEndian.AppendUint32(b, wireLen(len(r.Key), math.MaxInt32))
		b = append(b, r.Key...)
	}
	b = binary.BigEndian.AppendUint32(b, wireLen(len(r.Headers), math.MaxUint32))
	for _, h := range r.Headers {
		b = appendWireString(b, h.Key)
		b = appendWireString(b, h.Value)
	}
	b = binary.BigEndian.AppendUint32(b, wireLen(len(r.Body), math.MaxUint32))
	return append(b, r.Body...)
}

func appendWireString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, wireLen(len(s), math.MaxUint32))
	return append(b, s...)
}

// wireLen converts a count or length for a 32-bit field whose largest value
// is limit; truncating it would write a batch that decodes as something
// else.
func wireLen(n int, limit uint64) uint32 {
	if uint64(n) > limit {
		panic(fmt.Sprintf("picowire: wire length %d does not fit in its field", n))
	}
	return uint32(n)
}

// recordSize returns the bytes appendBatchRecord writes for r.
func recordSize(r *domain.Record) int {
	n := minBatchRecord + len(r.Key) + len(r.Body)
	for _, h := range r.Headers {
		n += minBatchHeader + len(h.Key) + len(h.Value)
	}
	return n
}

// batchReader reads the big-endian fields of a binary batch or response.
// The first failure sticks and later reads return zero values, so callers
// check once at the end.
type batchReader struct {
	rest   []byte
	record int    // index of the record being read, -1 outside records
	what   string // "batch" or "response", for messages
	err    error
}

// fail records the first failure, naming the record it happened in.
func (r *batchReader) fail(format string, args ...any) {
	if r.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if r.record >= 0 {
		msg = fmt.Sprintf("record %d: %s", r.record, msg)
	}
	r.err = fmt.Errorf("%w: %s", domain.ErrMalformed, msg)
}

// start reads the version and the record count, checking both.
func (r *batchReader) start(maxRecords int) int {
	if len(r.rest) == 0 {
		r.fail("empty %s: no version byte", r.what)
		return 0
	}
	if v := r.rest[0]; v != batchVersion {
		r.fail("unknown %s version %d (want %d)", r.what, v, batchVersion)
		return 0
	}
	r.rest = r.rest[1:]
	count := r.u32("record count")
	if overLimit(uint64(count), maxRecords) {
		r.fail("%s of %d records, the limit is %d", r.what, count, max(maxRecords, 0))
		return 0
	}
	return int(count)
}

// recordTail reads what every record ends with: its key, headers, then the
// body.
func (r *batchReader) recordTail(maxHeaders int) domain.Record {
	rec := domain.Record{Key: r.key()}
	n := r.u32("header count")
	if overLimit(uint64(n), maxHeaders) {
		r.fail("%d headers, the limit is %d", n, max(maxHeaders, 0))
		return rec
	}
	if n > 0 && r.err == nil {
		rec.Headers = make([]domain.Header, 0, min(int(n), len(r.rest)/minBatchHeader))
		for j := 0; j < int(n) && r.err == nil; j++ {
			rec.Headers = append(rec.Headers, domain.Header{Key: r.name(j), Value: string(r.bytes(fmt.Sprintf("header %d value", j)))})
		}
	}
	rec.Body = r.bytes("body")
	if r.err != nil {
		return domain.Record{}
	}
	return rec
}

// name reads the name of header h, which must be UTF-8.
func (r *batchReader) name(h int) string {
	s := r.bytes(fmt.Sprintf("header %d name", h))
	if r.err == nil && !utf8.Valid(s) {
		r.fail("header %d name is not valid UTF-8", h)
	}
	return string(s)
}

// key reads a record's key: -1 is none, anything else below 0 an error.
func (r *batchReader) key() []byte {
	n := r.u32("key length")
	switch {
	case r.err != nil || n == noKeyLen:
		return nil
	case n > math.MaxInt32:
		r.fail("key length %d (-1 is no key)", int32(n))
		return nil
	case uint64(n) > uint64(len(r.rest)):
		r.fail("key length %d past the end of the %s (%d bytes left)", n, r.what, len(r.rest))
		return nil
	}
	k := r.rest[:n:n]
	r.rest = r.rest[n:]
	return k
}

// bytes reads a length-prefixed field, aliasing the input; empty is nil.
// The slice's capacity ends with it, so appending to it cannot overwrite
// the bytes after it.
func (r *batchReader) bytes(field string) []byte {
	n := r.u32(field + " length")
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.rest)) {
		r.fail("%s length %d past the end of the %s (%d bytes left)", field, n, r.what, len(r.rest))
		return nil
	}
	if n == 0 {
		return nil
	}
	b := r.rest[:n:n]
	r.rest = r.rest[n:]
	return b
}

func (r *batchReader) u32(field string) uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.rest) < 4 {
		r.fail("%s truncated", field)
		return 0
	}
	v := binary.BigEndian.Uint32(r.rest)
	r.rest = r.rest[4:]
	return v
}

func (r *batchReader) u64(field string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.rest) < 8 {
		r.fail("%s truncated", field)
		return 0
	}
	v := binary.BigEndian.Uint64(r.rest)
	r.rest = r.rest[8:]
	return v
}

// finish returns the first failure, or one for bytes after the last record.
func (r *batchReader) finish() error {
	r.record = -1
	if r.err == nil && len(r.rest) != 0 {
		r.fail("%d trailing bytes after the last record", len(r.rest))
	}
	return r.err
}
