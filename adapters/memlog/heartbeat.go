package memlog

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/picomq/pico/ports"
)

// Heartbeats is an in-memory ports.Heartbeats. Safe for concurrent use.
type Heartbeats struct {
	mu    sync.Mutex
	beats map[uint32]ports.Heartbeat
}

var _ ports.Heartbeats = (*Heartbeats)(nil)

// NewHeartbeats returns heartbeats with no record.
func NewHeartbeats() *Heartbeats { return &Heartbeats{beats: map[uint32]ports.Heartbeat{}} }

// Beat implements ports.Heartbeats.
func (h *Heartbeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.beats[node]; ok && old.Epoch > epoch {
		return nil
	}
	h.beats[node] = ports.Heartbeat{Node: node, Epoch: epoch, At: time.UnixMilli(now.UnixMilli())}
	return nil
}

// Beats implements ports.Heartbeats.
func (h *Heartbeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ports.Heartbeat, 0, len(h.beats))
	for _, b := range h.beats {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b ports.Heartbeat) int { return cmp.Compare(a.Node, b.Node) })
	return out, nil
}
