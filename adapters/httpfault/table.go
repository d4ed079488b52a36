package httpfault

import (
	"math/rand/v2"
	"sync"
)

// Table holds the armed faults of one listener, one per path.
type Table struct {
	mu     sync.Mutex
	faults map[string]*armed
	rand   func() float64
}

type armed struct {
	Fault
	left int
}

// NewTable returns an empty table drawing its probabilities and jitter
// from rand (nil: math/rand/v2), so tests can fix them.
func NewTable(rand func() float64) *Table {
	if rand == nil {
		rand = randFloat
	}
	return &Table{faults: map[string]*armed{}, rand: rand}
}

func randFloat() float64 { return rand.Float64() }

// Arm sets f for its path, replacing the path's fault if any.
func (t *Table) Arm(f Fault) {
	left := 1
	if f.Count != nil {
		left = *f.Count
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.faults[f.Path] = &armed{Fault: f, left: left}
}

// Clear disarms every fault.
func (t *Table) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.faults)
}

// fire returns the fault that fires on a request, using one of its count,
// and a draw in [0, 1) for its jitter; ok is false if none fires.
func (t *Table) fire(path, method string) (f Fault, jitter float64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.faults[path]
	if a == nil || a.Method != "" && a.Method != method {
		return Fault{}, 0, false
	}
	if a.Probability != nil && t.rand() >= *a.Probability {
		return Fault{}, 0, false
	}
	if a.left--; a.left <= 0 {
		delete(t.faults, path)
	}
	return a.Fault, t.rand(), true
}
