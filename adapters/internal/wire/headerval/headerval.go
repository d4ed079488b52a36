// Package headerval reads and writes header and query values the same way
// in both stream listeners: unsigned decimals, client values quoted into
// error messages, If-None-Match lists, expiry times, and the rule that a
// header carrying one value is not given twice with different ones (Once).
//
// It imports the standard library and domain (for domain.ErrMalformed,
// which ParseUint's errors wrap).
package headerval

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/domain"
)

// IsDigits reports whether s is one or more ASCII digits.
func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseUint parses a strict unsigned decimal: ASCII digits only, no sign, no
// leading zero (except "0"), fits in 63 bits (at most math.MaxInt64). Its
// errors wrap domain.ErrMalformed.
func ParseUint(s string) (uint64, error) {
	if !IsDigits(s) {
		return 0, malformed("%s is not an unsigned decimal number", Clip(s))
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, malformed("%s has a leading zero", Clip(s))
	}
	// IsDigits leaves only the range for ParseInt to reject.
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, malformed("%s is out of range", Clip(s))
	}
	return uint64(v), nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", domain.ErrMalformed, fmt.Sprintf(format, args...))
}

// Clip quotes a client value for an error message, shortened so an error
// never echoes a large input back.
func Clip(v string) string {
	const limit = 64
	if len(v) > limit {
		return fmt.Sprintf("%q (%d bytes)", v[:limit]+"...", len(v))
	}
	return strconv.Quote(v)
}

// Put sets header key, which must be in canonical form (see
// http.CanonicalHeaderKey), to value. Header.Set canonicalizes the key on
// each call, which on the append path costs more than the write itself.
func Put(h http.Header, key, value string) { h[key] = []string{value} }

// SetUint sets a header to v in decimal.
func SetUint(h http.Header, name string, v uint64) { h.Set(name, strconv.FormatUint(v, 10)) }

// Shared returns a header value for h[key] = v that every response
// carrying it shares, so setting it allocates nothing: net/http and echo
// replace a header's slice, or append to a copy of it, and never write
// into it.
func Shared(value string) []string { return []string{value} }

// ETagMatches reports whether an If-None-Match list names tag.
// If-None-Match compares weakly (RFC 9110), so a W/ prefix is ignored.
func ETagMatches(ifNoneMatch, tag string) bool {
	for candidate := range strings.SplitSeq(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == tag || candidate == "*" {
			return true
		}
	}
	return false
}

// FormatExpiresAt formats unix milliseconds as RFC 3339 in UTC, with
// milliseconds only when there are some.
func FormatExpiresAt(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	if ms%1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339)
}
