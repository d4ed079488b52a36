package engine

import (
	"slices"
	"sync"
)

// dirtySet holds the ids of local streams that may have background work
// (an upload, a compaction), so that a round visits those and not every
// open stream: an idle stream costs no CPU. An id is added when its work
// may have appeared and taken by the round that does it, which adds it
// back if work is left.
type dirtySet struct {
	mu  sync.Mutex
	ids map[uint64]struct{}
}

func (d *dirtySet) add(ids ...uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[uint64]struct{}{}
	}
	for _, id := range ids {
		d.ids[id] = struct{}{}
	}
}

func (d *dirtySet) has(id uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.ids[id]
	return ok
}

// take empties the set and returns its ids in order.
func (d *dirtySet) take() []uint64 {
	d.mu.Lock()
	ids := d.ids
	d.ids = nil
	d.mu.Unlock()
	out := make([]uint64, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
