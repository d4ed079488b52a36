package httpguard

import "sync/atomic"

// LiveReaders counts the live reads parked on the node, for both
// protocols, against one cap: each holds a connection (HTTP/1) and a
// goroutine for as long as it waits.
type LiveReaders struct {
	max    int64
	parked atomic.Int64
}

// NewLiveReaders caps parked live reads at max; 0 counts them without a
// cap.
func NewLiveReaders(max int) *LiveReaders { return &LiveReaders{max: int64(max)} }

// Park takes a place, reporting false (and taking none) at the cap.
func (l *LiveReaders) Park() bool {
	if n := l.parked.Add(1); l.max > 0 && n > l.max {
		l.parked.Add(-1)
		return false
	}
	return true
}

// Leave gives back a place Park took.
func (l *LiveReaders) Leave() { l.parked.Add(-1) }

// Max is the cap, 0 for none.
func (l *LiveReaders) Max() int64 { return l.max }

// Parked is the live reads parked now.
func (l *LiveReaders) Parked() int64 { return l.parked.Load() }
