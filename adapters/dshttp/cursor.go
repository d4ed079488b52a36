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
	return strconv.FormatUint(s.cursorValue(clientCursor), 10)
}

func (s *server) cursorValue(clientCursor string) uint64 {
	current := cursorIntervalAt(s.cfg.Now())
	client, err := strconv.ParseUint(clientCursor, 10, 64)
	if err != nil || client < current {
		return current
	}
	jitter := max(1, s.jitterSeconds()/uint64(cursorInterval/time.Second))
	if client > math.MaxUint64-jitter {
		return current
	}
	return client + jitter
}

// streamCursor is the cursor of one control event of an event stream that
// clientCursor opened: as cursor, but never below the last one the stream
// sent (cursors must not go backwards, and each draws its own jitter).
func (s *server) streamCursor(clientCursor string, last *uint64) string {
	*last = max(*last, s.cursorValue(clientCursor))
	return strconv.FormatUint(*last, 10)
}

func cursorIntervalAt(t time.Time) uint64 {
	if t.Before(cursorEpoch) {
		return 0
	}
	return uint64(t.Sub(cursorEpoch) / cursorInterval)
}
