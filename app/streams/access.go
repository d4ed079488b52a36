package streams

import "sync"

// accessTimes remembers when each stream with an idle TTL was last read or
// written by this process (unix ms). They live in memory only: the owner
// serves every access of an open stream, and a stream opened anew starts
// its idle window again (see Service.expired).
type accessTimes struct {
	mu   sync.Mutex
	byID map[uint64]int64
	// reclaiming holds the streams the lease holder is taking over to
	// judge (Service.reclaim), and how far it got.
	reclaiming map[uint64]reclaimStep
}

func (a *accessTimes) touch(id uint64, nowMs int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = map[uint64]int64{}
	}
	a.byID[id] = max(a.byID[id], nowMs)
}

func (a *accessTimes) last(id uint64) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byID[id]
}

func (a *accessTimes) forget(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byID, id)
}

// reclaimStep is where the lease holder's takeover of a stream stands
// (Service.reclaim).
type reclaimStep int

const (
	notReclaiming reclaimStep = iota
	judging                   // taken over, use not yet judged: not expired
	doomed                    // judged unused: requests refused (unavailable) until it is deleted or kept
)

// setReclaim records where the takeover of id stands.
func (a *accessTimes) setReclaim(id uint64, step reclaimStep) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reclaiming == nil {
		a.reclaiming = map[uint64]reclaimStep{}
	}
	if step == notReclaiming {
		delete(a.reclaiming, id)
		return
	}
	a.reclaiming[id] = step
}

func (a *accessTimes) reclaimStep(id uint64) reclaimStep {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reclaiming[id]
}
