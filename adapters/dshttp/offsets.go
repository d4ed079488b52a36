package dshttp

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

// A Durable Streams offset is "%016d_%016d" of a read sequence (always 0
// here) and a record offset: the layout of the reference servers, which
// clients and the conformance suite know. Zero padding keeps offsets
// sorting bytewise up to 10^16 records.
const (
	offsetZeros  = "0000000000000000"
	offsetPrefix = offsetZeros + "_"
)

// Reserved offsets: the stream's start and its current tail.
const (
	offsetStart = "-1"
	offsetNow   = "now"
)

// position is where a read starts.
type position struct {
	at uint64
	// now: at the tail, which the read looks up when it starts.
	now bool
	// given: the client named a record offset (not the start or now).
	given bool
}

// formatOffset writes the offset before record n.
func formatOffset(n uint64) string {
	var digits [20]byte // one allocation in all: every append's answer has one
	d := strconv.AppendUint(digits[:0], n, 10)
	var b strings.Builder
	b.Grow(len(offsetPrefix) + max(len(offsetZeros), len(d)))
	b.WriteString(offsetPrefix)
	b.WriteString(offsetZeros[:max(0, len(offsetZeros)-len(d))])
	b.Write(d)
	return b.String()
}

// parseOffset parses an offset as ^(-1|now|\d+_\d+)$ with numbers that fit
// 64 bits and a read sequence of 0.
func parseOffset(s string) (position, error) {
	switch s {
	case offsetStart:
		return position{}, nil
	case offsetNow:
		return position{now: true}, nil
	}
	readSeq, record, ok := strings.Cut(s, "_")
	if !ok || !headerval.IsDigits(readSeq) || !headerval.IsDigits(record) {
		return position{}, badRequest("offset must be -1, now or an offset this server returned, got %s", headerval.Clip(s))
	}
	seq, err := strconv.ParseUint(readSeq, 10, 64)
	if err != nil || seq != 0 {
		return position{}, badRequest("offset %s is beyond the tail", headerval.Clip(s))
	}
	at, err := strconv.ParseUint(record, 10, 64)
	if err != nil {
		return position{}, badRequest("offset %s is beyond the tail", headerval.Clip(s))
	}
	return position{at: at, given: true}, nil
}

// offsetParam reads the offset query parameter: absent is the start;
// empty or repeated is a bad request.
func offsetParam(q url.Values) (pos position, present bool, err error) {
	values, present := q["offset"]
	switch {
	case !present:
		return position{}, false, nil
	case len(values) > 1:
		return position{}, true, badRequest("offset is given %d times", len(values))
	case values[0] == "":
		return position{}, true, badRequest("offset is empty")
	}
	pos, err = parseOffset(values[0])
	return pos, true, err
}

// FormatOffset writes an offset as this protocol shows it, for other
// components that report offsets to Durable Streams clients (webhook
// bodies).
func FormatOffset(n uint64) string { return formatOffset(n) }
