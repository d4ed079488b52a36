package handlertest

import (
	"context"
	"sync"
)

// Scheduler is a livehttp.Scheduler that counts what it is asked: the
// appends counted as foreground, the catch-up turns taken and their bytes.
type Scheduler struct {
	mu                    sync.Mutex
	appends, turns, bytes int
	held                  int // turns taken and not yet released
}

// Foreground counts an append.
func (s *Scheduler) Foreground() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	return func() {}
}

// Turn counts a turn of n bytes; it never waits.
func (s *Scheduler) Turn(_ context.Context, n int) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	s.bytes += n
	s.held++
	return func() { s.mu.Lock(); s.held--; s.mu.Unlock() }, nil
}

// Counts returns the appends, turns and bytes counted so far, and the
// turns held now.
func (s *Scheduler) Counts() (appends, turns, bytes, held int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends, s.turns, s.bytes, s.held
}
