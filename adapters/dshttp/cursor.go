package dshttp

import (
	"math"
	"strconv"
	"time"
)

// Stream-Cursor values count 20-second intervals since the protocol's
// epoch. Long-poll URLs carry the cursor, so readers of one interval share
// a CDN cache key and their requests collapse into one.
var cursorEpoch = time.Date(2024, time.October, 9, 0, 0, 0, 0, time.UTC)

const (
	cursorInterval     = 20 * time.Second
	maxCursorJitterSec = 3600
)

// cursor returns the Stream-Cursor answering a request that echoed
// clientCursor ("" when none). A client already at or past the current
// interval gets its own cursor plus a random jitter, so its next request
// is a new cache key rather than the cached answer it just had.
func (s *server) cursor(clientCursor string) string {
	current := cursorIntervalAt(s.cfg.Now())
	client, err := strconv.ParseUint(clientCursor, 10, 64)
	if err != nil || client < current {
		return strconv.FormatUint(current, 10)
	}
	jitter := max(1, s.jitterSeconds()/uint64(cursorInterval/time.Second))
	if client > math.MaxUint64-jitter {
		return strconv.FormatUint(current, 10)
	}
	return strconv.FormatUint(client+jitter, 10)
}

func cursorIntervalAt(t time.Time) uint64 {
	if t.Before(cursorEpoch) {
		return 0
	}
	return uint64(t.Sub(cursorEpoch) / cursorInterval)
}
