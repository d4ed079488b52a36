package picowire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
)

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
	domain.Record
}

// malformed returns an error wrapping domain.ErrMalformed with the
// formatted reason.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", domain.ErrMalformed, fmt.Sprintf(format, args...))
}

// overLimit reports whether n exceeds limit, a negative limit counting as 0.
func overLimit(n uint64, limit int) bool {
	return n > uint64(max(limit, 0))
}

// ParseSeq parses a read position: a decimal offset (leading zeros allowed,
// so 20-digit padded forms parse, up to math.MaxUint64), or a negative
// number meaning the start (returned as 0; it must still fit in an int64).
// "now" is handled by callers.
func ParseSeq(s string) (uint64, error) {
	digits, negative := strings.CutPrefix(s, "-")
	if !headerval.IsDigits(digits) {
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
