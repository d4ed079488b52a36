package engine

import (
	"context"
	"sync"
)

// flights runs at most one call per key at a time; callers that arrive
// while one runs wait for it (or their own context) and share its error.
type flights struct {
	mu      sync.Mutex
	running map[uint64]*flight
}

type flight struct {
	done chan struct{}
	err  error
}

func (f *flights) do(ctx context.Context, key uint64, fn func() error) error {
	f.mu.Lock()
	if c, ok := f.running[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.running == nil {
		f.running = map[uint64]*flight{}
	}
	c := &flight{done: make(chan struct{})}
	f.running[key] = c
	f.mu.Unlock()
	c.err = fn()
	f.mu.Lock()
	delete(f.running, key)
	f.mu.Unlock()
	close(c.done)
	return c.err
}

// busy reports whether a call for key is running.
func (f *flights) busy(key uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.running[key]
	return ok
}
