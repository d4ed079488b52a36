// Package wakeups fans coalescing wake-up signals out to subscribers. Logs use
// it to implement ports.LogNotifier: a wake-up is only a hint to re-read, so
// a slow subscriber gets one pending signal rather than a queue.
package wakeups

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("wakeups: closed")

// Hub delivers Wake calls to every live subscriber. The zero value is not
// usable; call New.
type Hub struct {
	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	closed bool
	done   chan struct{}
}

// New returns an open hub.
func New() *Hub {
	return &Hub{subs: make(map[chan struct{}]struct{}), done: make(chan struct{})}
}

// Subscribe returns a channel that receives a value after each Wake, coalesced
// to at most one pending value. It is closed when ctx ends or the hub closes.
func (h *Hub) Subscribe(ctx context.Context) (<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	ch := make(chan struct{}, 1)
	h.subs[ch] = struct{}{}
	go func() {
		select {
		case <-ctx.Done():
		case <-h.done:
		}
		h.drop(ch)
	}()
	return ch, nil
}

// drop closes ch under the lock so that Wake never sends on a closed channel.
func (h *Hub) drop(ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

// Wake signals every subscriber without blocking.
func (h *Hub) Wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending; coalesce
		}
	}
}

// Close closes every subscriber channel and refuses new subscriptions.
// Idempotent.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}
