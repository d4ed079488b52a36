package engine

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"

	"github.com/picomq/pico/domain"
)

// blockCache holds decoded stream sections of committed data objects, least
// recently used first out, bounded by bytes. Concurrent misses for one
// section share a single fetch: one GET however many readers wait.
type blockCache struct {
	max int

	mu       sync.Mutex
	size     int
	lru      *list.List // of *cacheEntry, most recent at the front
	entries  map[blockKey]*list.Element
	inflight map[blockKey]*fetch

	// hits counts gets served without a fetch of their own (cached, or
	// joining one in flight); misses counts fetches.
	hits, misses atomic.Int64
}

type blockKey struct{ object, stream uint64 }

type cacheEntry struct {
	key   blockKey
	frame domain.Frame
	size  int
}

type fetch struct {
	done  chan struct{}
	frame domain.Frame
	err   error
}

func newBlockCache(maxBytes int) *blockCache {
	return &blockCache{max: maxBytes, lru: list.New(), entries: map[blockKey]*list.Element{},
		inflight: map[blockKey]*fetch{}}
}

// get returns the section, loading it with load on a miss.
func (c *blockCache) get(ctx context.Context, k blockKey, load func() (domain.Frame, error)) (domain.Frame, error) {
	c.mu.Lock()
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		f := el.Value.(*cacheEntry).frame
		c.mu.Unlock()
		c.hits.Add(1)
		return f, nil
	}
	if f, ok := c.inflight[k]; ok {
		c.mu.Unlock()
		c.hits.Add(1)
		select {
		case <-f.done:
			return f.frame, f.err
		case <-ctx.Done():
			return domain.Frame{}, ctx.Err()
		}
	}
	f := &fetch{done: make(chan struct{})}
	c.inflight[k] = f
	c.mu.Unlock()
	c.misses.Add(1)
	f.frame, f.err = load()
	c.mu.Lock()
	delete(c.inflight, k)
	if f.err == nil {
		c.addLocked(k, f.frame)
	}
	c.mu.Unlock()
	close(f.done)
	return f.frame, f.err
}

// CacheStats describes the block cache (engine doc: the read path).
type CacheStats struct {
	Bytes        int
	Hits, Misses int64
}

func (c *blockCache) stats() CacheStats {
	c.mu.Lock()
	size := c.size
	c.mu.Unlock()
	return CacheStats{Bytes: size, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// has reports whether k is cached or being fetched.
func (c *blockCache) has(k blockKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, cached := c.entries[k]
	_, loading := c.inflight[k]
	return cached || loading
}

func (c *blockCache) addLocked(k blockKey, f domain.Frame) {
	e := &cacheEntry{key: k, frame: f, size: f.Size() + 64}
	if e.size > c.max {
		return // larger than the whole cache: serve it uncached
	}
	c.entries[k] = c.lru.PushFront(e)
	c.size += e.size
	for c.size > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		oe := old.Value.(*cacheEntry)
		delete(c.entries, oe.key)
		c.size -= oe.size
	}
}
