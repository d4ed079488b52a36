package engine

import (
	"slices"
	"sync"
	"time"
)

// idleQueue holds every local stream that may be released once idle, in
// the order it was last looked at, so that a round visits only the
// streams whose idle period has passed: an idle node with a million open
// streams does no work for those it released long ago, and a stream
// still in use costs one look per period.
type idleQueue struct {
	mu      sync.Mutex
	entries []idleEntry
	head    int
}

type idleEntry struct {
	s  *stream
	at int64 // Unix nanoseconds
}

func (q *idleQueue) push(s *stream, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries = append(q.entries, idleEntry{s: s, at: at.UnixNano()})
}

// due removes and returns up to limit entries looked at before cutoff.
func (q *idleQueue) due(cutoff time.Time, limit int) []idleEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	end, before := q.head, cutoff.UnixNano()
	for end < len(q.entries) && end-q.head < limit && q.entries[end].at < before {
		end++
	}
	out := slices.Clone(q.entries[q.head:end])
	clear(q.entries[q.head:end]) // let released streams be collected
	q.head = end
	if q.head > len(q.entries)/2 {
		n := copy(q.entries, q.entries[q.head:])
		clear(q.entries[n:])
		q.entries, q.head = q.entries[:n], 0
		if cap(q.entries) > 1024 && n < cap(q.entries)/4 {
			q.entries = slices.Clone(q.entries) // a million released streams leave no array behind
		}
	}
	return out
}

// releaseRound bounds the streams one round looks at, so a round never
// holds up the maintenance loop for long.
const releaseRound = 1 << 16

// releaseIdle lets go, in memory only, of the local streams idle for
// Config.ReleaseIdleAfter: no operation opened them, every record is
// committed to data objects and they have no time rules (see releaseIfIdle).
// They stay open in the metadata, written by this process, so their next
// operation reopens them from the view and their last data object
// (reopenOwn) without a metadata write. It returns how many it released.
func (e *Engine) releaseIdle() int {
	after := e.cfg.ReleaseIdleAfter
	if after <= 0 {
		return 0
	}
	now := e.cfg.Now()
	released := 0
	for _, en := range e.idle.due(now.Add(-after), releaseRound) {
		s := en.s
		if s.used.Swap(false) {
			e.idle.push(s, now) // used meanwhile: another period
			continue
		}
		switch e.releaseIfIdle(s) {
		case releasedIdle:
			released++
		case keptBusy:
			e.idle.push(s, now)
		case gone:
		}
	}
	return released
}

type releaseOutcome int

const (
	releasedIdle releaseOutcome = iota
	keptBusy                    // work is pending, or an operation holds it
	gone                        // let go already: nothing to look at again
)

// releaseIfIdle drops s from memory if it holds nothing its next open could not
// rebuild from the metadata and its last data object: every record is
// committed, a seal is recorded, and it has no time rules (the retention
// sweep visits only local streams, and keeps their last timestamp).
// Holding the gate keeps appends out; a reader that holds a handle gets
// ErrNotLocal at its next call and opens the stream again, and readers
// waiting for a change are woken to do so.
func (e *Engine) releaseIfIdle(s *stream) releaseOutcome {
	if !s.gate.TryLock() {
		return keptBusy
	}
	defer s.gate.Unlock()
	e.mu.Lock()
	_, timed := e.timed[s.id]
	local := e.streams[s.id] == s
	e.mu.Unlock()
	switch {
	case !local:
		return gone
	case timed:
		return gone // never released: off the queue for good
	case !s.quiescent() || e.sealUnrecorded(s) || e.toCompact.has(s.id):
		return keptBusy
	}
	e.forget(s)
	return releasedIdle
}

// quiescent reports whether every record of s is durable and committed and
// nothing failed it. The caller holds its gate.
func (s *stream) quiescent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed == nil && s.confirmed == s.write.Next && s.committed >= s.write.Next
}
