package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/picomq/pico/domain"
)

// Trim drops the stream's records below offset to and returns the
// stream's start after it. Only committed records can be trimmed (the
// catalog of data objects is what moves); records still only in the WAL are
// uploaded first, so a trim up to the durable tail takes at once. to is
// clamped to the durable tail.
func (h Handle) Trim(ctx context.Context, to uint64) (uint64, error) {
	e, s, id := h.e, h.s, h.s.id
	if err := s.err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	to = min(to, s.confirmed)
	s.mu.Unlock()
	if s.committedThrough() < to {
		if _, err := e.Upload(ctx); err != nil {
			return 0, err
		}
	}
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return 0, ErrNotFound
	}
	to = min(to, st.End)
	if to <= st.Start {
		return st.Start, nil
	}
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.TrimStream{By: e.cfg.By, Stream: id, Epoch: s.epoch, Start: to,
		KeepLast: s.hasDurableState()})
	if err != nil {
		return 0, err
	}
	if r.Code == domain.ResultConflict {
		return 0, fmt.Errorf("%w: %s", ErrPinned, r.Reason)
	}
	if !r.OK() {
		return 0, fmt.Errorf("engine: trim stream %d: %s", id, r)
	}
	v = e.cfg.Plane.View()
	if st, ok := v.Stream(id); ok {
		return st.Start, nil
	}
	return 0, ErrNotFound
}

// Held returns the handle of stream id if it is open on this process,
// without opening it.
func (e *Engine) Held(id uint64) (Handle, bool) {
	s, ok := e.local(id)
	if !ok || s.err() != nil {
		return Handle{}, false
	}
	return Handle{e: e, s: s}, true
}

// Tail returns the durable next offset of a stream this process has open,
// as readers see it (Handle.Tail).
func (e *Engine) Tail(id uint64) (uint64, error) {
	s, ok := e.local(id)
	if !ok {
		return 0, ErrNotLocal
	}
	return Handle{e: e, s: s}.Tail()
}

// Tail returns the stream's durable next offset as readers see it (see
// ReadResult.Confirmed).
func (h Handle) Tail() (uint64, error) {
	tail, _, err := h.End()
	return tail, err
}

// End returns the stream's durable next offset as readers see it, and
// whether the stream is closed there, both as of one moment, as a read
// reports them. While the stream is ending here it returns ErrEnding.
func (h Handle) End() (tail uint64, closed bool, err error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return 0, false, s.failed
	}
	if s.ending != nil {
		return 0, false, ErrEnding
	}
	return s.readableLocked(), s.closed, nil
}

// Local lists the streams this process has open.
func (e *Engine) Local() []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Collect(maps.Keys(e.streams))
}

// LocalTimed is the streams this process writes whose configuration is
// Timed (domain.StreamConfig): records age out or the stream expires.
// Others never need a retention sweep.
func (e *Engine) LocalTimed() []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Collect(maps.Keys(e.timed))
}

// BlockCache reads the block cache's size and hit counts.
func (e *Engine) BlockCache() CacheStats { return e.blocks.stats() }

// LocalCount is how many streams this process writes.
func (e *Engine) LocalCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.streams)
}

// CommitThrough makes sure the stream's records below offset `to` are in
// committed data objects, uploading if needed, so that any node can read
// them (a fork reads its source's records this way).
func (h Handle) CommitThrough(ctx context.Context, to uint64) error {
	e, s, id := h.e, h.s, h.s.id
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return ErrNotFound
	}
	if st.End >= to {
		return nil
	}
	if err := s.err(); err != nil {
		return err
	}
	if err := s.waitConfirmed(ctx, to); err != nil {
		return err
	}
	if _, err := e.Upload(ctx); err != nil {
		return err
	}
	if s.committedThrough() < to {
		return fmt.Errorf("engine: stream %d committed through %d, not %d", id, s.committedThrough(), to)
	}
	return nil
}
