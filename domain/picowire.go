package domain

// Pico wire codecs: the binary and JSON batch formats of the Pico protocol,
// and the strict parsers for its header and query values. Every decoder is
// bounded by its input and by the limits it is given, and never panics.
//
// The binary formats live in picobatch.go, the JSON ones in picojson.go and
// the stream Meta encoding in streamconfig.go.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by every wire decoding error; the message after it
// says what is wrong, fit to show a client in a 400. Records and headers are
// numbered from 0 in messages, as indexes into the batch.
var ErrMalformed = errors.New("malformed")

// Media types of Pico batches.
const (
	BatchContentType     = "application/vnd.picomq.batch"
	BatchJSONContentType = "application/vnd.picomq.batch+json"
)

// BatchLimits bound a decoded batch. A limit of 0 (or less) admits nothing:
// callers pass their configured limits, decoders never invent one.
type BatchLimits struct {
	MaxRecords int // records per batch
	MaxHeaders int // headers per record
}

// SeqRecord is a record with its offset, as reads return it.
type SeqRecord struct {
	Seq uint64
	Record
}

// malformed returns an error wrapping ErrMalformed with the formatted reason.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// overLimit reports whether n exceeds limit, a negative limit counting as 0.
func overLimit(n uint64, limit int) bool {
	return n > uint64(max(limit, 0))
}

// ParseUint parses a strict unsigned decimal: ASCII digits only, no sign, no
// leading zero (except "0"), fits in 63 bits (at most math.MaxInt64).
func ParseUint(s string) (uint64, error) {
	if !isDigits(s) {
		return 0, malformed("%s is not an unsigned decimal number", quoteShort(s))
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, malformed("%s has a leading zero", quoteShort(s))
	}
	// isDigits leaves only the range for ParseInt to reject.
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, malformed("%s is out of range", quoteShort(s))
	}
	return uint64(v), nil
}

// ParseSeq parses a read position: a decimal offset (leading zeros allowed,
// so 20-digit padded forms parse, up to math.MaxUint64), or a negative
// number meaning the start (returned as 0; it must still fit in an int64).
// "now" is handled by callers.
func ParseSeq(s string) (uint64, error) {
	digits, negative := strings.CutPrefix(s, "-")
	if !isDigits(digits) {
		return 0, malformed("offset %s is not a decimal number", quoteShort(s))
	}
	if negative {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return 0, malformed("offset %s is out of range", quoteShort(s))
		}
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, malformed("offset %s is out of range", quoteShort(s))
	}
	return v, nil
}

// ParseBool parses a protocol flag: "true" (any ASCII case) is true, "false"
// (any ASCII case) or empty false, anything else an error.
func ParseBool(s string) (bool, error) {
	switch {
	case s == "" || equalFoldASCII(s, "false"):
		return false, nil
	case equalFoldASCII(s, "true"):
		return true, nil
	}
	return false, malformed("%s is not true or false", quoteShort(s))
}

// isDigits reports whether s is non-empty and all ASCII digits; strconv alone
// would also take signs.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// equalFoldASCII compares s with the lower-case ASCII word, folding only
// ASCII letters: strings.EqualFold would also let "falſe" through.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// quoteShort quotes client input for an error message, cut short so a huge
// value cannot blow up the message.
func quoteShort(s string) string {
	const maxShown = 40
	if len(s) > maxShown {
		return strconv.Quote(s[:maxShown]) + "…"
	}
	return strconv.Quote(s)
}
