package picohttp

import (
	"errors"
	"time"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

// maxExpiresAtMs is 9999-12-31T23:59:59.999Z, the last instant RFC 3339
// can write in UTC.
const maxExpiresAtMs = 253402300799999

// ParseExpiresAt parses a Pico-Expires-At value: an RFC 3339 time with any
// offset, or unix milliseconds. It returns unix milliseconds, truncating
// finer precision; times before 1970 or after 9999 in UTC are rejected, so
// every result formats back.
func ParseExpiresAt(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty time")
	}
	if headerval.IsDigits(s) {
		ms, err := headerval.ParseUint(s)
		if err != nil {
			return 0, errors.New("unix milliseconds must have no leading zeros")
		}
		if ms > maxExpiresAtMs {
			return 0, errors.New("time is after year 9999")
		}
		return int64(ms), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, errors.New("not an RFC 3339 time or unix milliseconds")
	}
	ms := t.UnixMilli()
	switch {
	case ms < 0:
		return 0, errors.New("time is before 1970")
	case ms > maxExpiresAtMs:
		return 0, errors.New("time is after year 9999")
	}
	return ms, nil
}
