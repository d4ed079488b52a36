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
	// judge (Service.reclaim): none of them counts as expired meanwhile.
	reclaiming map[uint64]bool
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

// reclaim marks id as being taken over (true) or no longer (false).
func (a *accessTimes) reclaim(id uint64, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reclaiming == nil {
		a.reclaiming = map[uint64]bool{}
	}
	if on {
		a.reclaiming[id] = true
	} else {
		delete(a.reclaiming, id)
	}
}

func (a *accessTimes) reclaimed(id uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reclaiming[id]
}
