package node

import (
	"runtime/debug"
	"sync"
	"time"
)

// memoryReturn gives the memory of streams released while idle back to
// the operating system. The Go runtime keeps freed heap for reuse up to
// twice the live heap, so a node that released a million idle streams
// would hold their memory for good; after a round that released many it
// collects and returns the free heap, at most once per returnEvery: the
// rounds after a wave of releases, which release none, return what its
// last minute left.
type memoryReturn struct {
	mu      sync.Mutex
	pending int
	last    time.Time
	running bool
}

const (
	// returnAfter released streams make a return worth a collection.
	returnAfter = 4096
	returnEvery = time.Minute
)

func (m *memoryReturn) released(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending += n
	if m.pending < returnAfter || m.running || time.Since(m.last) < returnEvery {
		return
	}
	m.startLocked()
}

// loaded returns, once, the heap a start's view decoding freed: about the
// size of the snapshot, for a view of many streams.
func (m *memoryReturn) loaded(streams int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if streams >= loadedReturnAfter && !m.running {
		m.startLocked()
	}
}

// loadedReturnAfter streams in the view make a start's return worth it.
const loadedReturnAfter = 100_000

func (m *memoryReturn) startLocked() {
	m.pending, m.running = 0, true
	go func() {
		debug.FreeOSMemory() // a full collection: off the maintenance loop
		m.mu.Lock()
		m.running, m.last = false, time.Now()
		m.mu.Unlock()
	}()
}
