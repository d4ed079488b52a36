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
	minBatchRecord    = 4 + 4         // header_count, body_len
	minResponseRecord = 8 + 8 + 4 + 4 // seq, timestamp, header_count, body_len
	minBatchHeader    = 4 + 4         // name len, value len
)

// EncodeBatch encodes records as a binary batch request body:
//
//	u8 version=1 | u32 count | count × record
//	record  = u32 header_count | header_count × (str name, str value) | u32 body_len | body
//	str     = u32 len | UTF-8 bytes
//
// Integers are big-endian (the original server's layout). Timestamps are not
// sent: the stream's owner assigns them. Headers keep their order,
// duplicates included; names and values that are not UTF-8 make a batch
// DecodeBatch rejects. It panics if a count or length does not fit in 32
// bits, which no bounded caller can reach.
func EncodeBatch(records []domain.Record) []byte {
	size := 1 + 4
	for i := range records {
		size += recordSize(&records[i])
	}
	b := make([]byte, 0, size)
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint32(b, wireLen(len(records)))
	for i := range records {
		b = appendBatchRecord(b, &records[i])
	}
	return b
}

// DecodeBatch decodes a binary batch request body. Bodies alias b. It
// rejects an unknown version, a count of 0 or over the limit, more headers
// than the limit, truncation, lengths past the end, header names or values
// that are not UTF-8, and trailing bytes. Decoded records have no timestamp,
// no Headers slice when they have none and a nil Body when it is empty.
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
//	u8 version=1 | u32 count | count × (u64 seq | i64 timestamp_ms | u32 header_count | headers | u32 body_len | body)
//
// headers and body are laid out as in EncodeBatch. It panics where
// EncodeBatch does.
func EncodeBatchResponse(records []SeqRecord) []byte {
	size := 1 + 4
	for i := range records {
		size += 8 + 8 + recordSize(&records[i].Record) // seq, timestamp
	}
	b := make([]byte, 0, size)
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint32(b, wireLen(len(records)))
	for i := range records {
		b = binary.BigEndian.AppendUint64(b, records[i].Seq)
		b = binary.BigEndian.AppendUint64(b, uint64(records[i].TimestampMs))
		b = appendBatchRecord(b, &records[i].Record)
	}
	return b
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
	b = binary.BigEndian.AppendUint32(b, wireLen(len(r.Headers)))
	for _, h := range r.Headers {
		b = appendWireString(b, h.Key)
		b = appendWireString(b, h.Value)
	}
	b = binary.BigEndian.AppendUint32(b, wireLen(len(r.Body)))
	return append(b, r.Body...)
}

func appendWireString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, wireLen(len(s)))
	return append(b, s...)
}

// wireLen converts a count or length for a u32 field; truncating it would
// write a batch that decodes as something else.
func wireLen(n int) uint32 {
	if uint64(n) > math.MaxUint32 {
		panic(fmt.Sprintf("picowire: wire length %d does not fit in 32 bits", n))
	}
	return uint32(n)
}

// recordSize returns the bytes appendBatchRecord writes for r.
func recordSize(r *domain.Record) int {
	n := minBatchRecord + len(r.Body)
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

// recordTail reads what every record ends with: headers, then the body.
func (r *batchReader) recordTail(maxHeaders int) domain.Record {
	var rec domain.Record
	n := r.u32("header count")
	if overLimit(uint64(n), maxHeaders) {
		r.fail("%d headers, the limit is %d", n, max(maxHeaders, 0))
		return rec
	}
	if n > 0 && r.err == nil {
		rec.Headers = make([]domain.Header, 0, min(int(n), len(r.rest)/minBatchHeader))
		for j := 0; j < int(n) && r.err == nil; j++ {
			rec.Headers = append(rec.Headers, domain.Header{Key: r.text(j, "name"), Value: r.text(j, "value")})
		}
	}
	rec.Body = r.bytes("body")
	if r.err != nil {
		return domain.Record{}
	}
	return rec
}

// text reads part ("name" or "value") of header h as a UTF-8 string.
func (r *batchReader) text(h int, part string) string {
	if r.err != nil {
		return ""
	}
	if len(r.rest) < 4 {
		r.fail("header %d %s length truncated", h, part)
		return ""
	}
	n := binary.BigEndian.Uint32(r.rest)
	r.rest = r.rest[4:]
	if uint64(n) > uint64(len(r.rest)) {
		r.fail("header %d %s length %d past the end of the %s (%d bytes left)", h, part, n, r.what, len(r.rest))
		return ""
	}
	s := r.rest[:n]
	r.rest = r.rest[n:]
	if !utf8.Valid(s) {
		r.fail("header %d %s is not valid UTF-8", h, part)
		return ""
	}
	return string(s)
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
