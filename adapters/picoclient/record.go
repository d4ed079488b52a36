package picoclient

import (
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// Record is one record of a stream. An append sends Key, Headers and Body;
// a read also fills in Seq and Timestamp, which the stream's owner assigns.
type Record struct {
	Seq       uint64    // position in the stream, from 0
	Timestamp time.Time // when the owner appended it, monotonic per stream
	// Key is the record's key: nil for none, and []byte{} the empty key.
	Key     []byte
	Headers []Header
	Body    []byte
}

// Header is one record header. Keys (names) may repeat; a value may hold
// any bytes.
type Header struct {
	Key, Value string
}

// wireRecords converts records to the shape the batch encoder takes.
func wireRecords(records []Record) []domain.Record {
	out := make([]domain.Record, len(records))
	for i, r := range records {
		out[i].Key, out[i].Body = r.Key, r.Body
		if len(r.Headers) > 0 {
			out[i].Headers = make([]domain.Header, len(r.Headers))
			for j, h := range r.Headers {
				out[i].Headers[j] = domain.Header{Key: h.Key, Value: h.Value}
			}
		}
	}
	return out
}

// readRecords converts a decoded page.
func readRecords(in []picowire.SeqRecord) []Record {
	out := make([]Record, len(in))
	for i, r := range in {
		out[i] = Record{Seq: r.Seq, Timestamp: time.UnixMilli(r.TimestampMs), Key: r.Key, Body: r.Body}
		if len(r.Headers) > 0 {
			out[i].Headers = make([]Header, len(r.Headers))
			for j, h := range r.Headers {
				out[i].Headers[j] = Header{Key: h.Key, Value: h.Value}
			}
		}
	}
	return out
}

// recordBytes is what records weigh against a batch's byte bound: keys,
// bodies, headers and the framing of each.
func recordBytes(r Record) int {
	n := 12 + len(r.Key) + len(r.Body)
	for _, h := range r.Headers {
		n += 8 + len(h.Key) + len(h.Value)
	}
	return n
}
