package engine

import (
	"container/list"
	"context"
	"sync"

	"github.com/picomq/pico/domain"
)

// indexCache keeps decoded data-object indexes, by object id. An object
// holds the sections of every stream one upload carried, often
// thousands: without it each stream's first read or reopen after a
// restart would fetch and decode the whole index again, so reopening
// every stream of an object would cost the square of its sections.
// Bounded by the sections held.
type indexCache struct {
	maxSections int

	mu       sync.Mutex
	sections int
	lru      *list.List // of *indexEntry, most recent at the front
	entries  map[uint64]*list.Element
	inflight map[uint64]*indexFetch
}

type indexEntry struct {
	object uint64
	index  map[uint64]domain.Section // by stream
}

type indexFetch struct {
	done  chan struct{}
	index map[uint64]domain.Section
	err   error
}

func newIndexCache(maxSections int) *indexCache {
	return &indexCache{maxSections: maxSections, lru: list.New(), entries: map[uint64]*list.Element{},
		inflight: map[uint64]*indexFetch{}}
}

// get returns object's index, loading it with load on a miss; concurrent
// misses of one object share one load.
func (c *indexCache) get(ctx context.Context, object uint64, load func() ([]domain.Section, error)) (map[uint64]domain.Section, error) {
	c.mu.Lock()
	if el, ok := c.entries[object]; ok {
		c.lru.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*indexEntry).index, nil
	}
	if f, ok := c.inflight[object]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.index, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &indexFetch{done: make(chan struct{})}
	c.inflight[object] = f
	c.mu.Unlock()
	secs, err := load()
	f.err = err
	if err == nil {
		f.index = make(map[uint64]domain.Section, len(secs))
		for _, s := range secs {
			f.index[s.Stream] = s
		}
	}
	c.mu.Lock()
	delete(c.inflight, object)
	if err == nil {
		c.addLocked(object, f.index)
	}
	c.mu.Unlock()
	close(f.done)
	return f.index, f.err
}

func (c *indexCache) addLocked(object uint64, index map[uint64]domain.Section) {
	if len(index) > c.maxSections {
		return // larger than the whole cache: serve it uncached
	}
	c.entries[object] = c.lru.PushFront(&indexEntry{object: object, index: index})
	c.sections += len(index)
	for c.sections > c.maxSections {
		old := c.lru.Back()
		c.lru.Remove(old)
		oe := old.Value.(*indexEntry)
		delete(c.entries, oe.object)
		c.sections -= len(oe.index)
	}
}

// forget drops object's index: the object is gone.
func (c *indexCache) forget(object uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[object]; ok {
		c.lru.Remove(el)
		delete(c.entries, object)
		c.sections -= len(el.Value.(*indexEntry).index)
	}
}
