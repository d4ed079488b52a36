package streams

import "sync"

// accessTimes remembers when each stream with an idle TTL was last read or
// written by this process (unix ms). They live in memory only: the owner
// serves every access of an open stream, and a stream opened anew starts
// its idle window again (see Service.expired).
type accessTimes struct {
	mu   sync.Mutex
	byID map[uint64]int64
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
