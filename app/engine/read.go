package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
)

// ReadResult is a page of a stream.
type ReadResult struct {
	Records []domain.Record // offsets [From, From+len(Records))
	// From is the requested offset, or the stream's start if that is above.
	From uint64
	// Confirmed is the durable tail readers see: the confirm offset, short
	// of the records of an append that sealed the stream until its seal is
	// recorded, so that they reach readers with the closure.
	Confirmed uint64
	// Closed: the stream's seal is recorded, as of Confirmed (taken at the
	// same moment): a page reaching Confirmed reaches the stream's end.
	Closed bool
	// Changed is closed when the stream next changes (the confirm offset
	// grows, the stream is sealed or deleted): long-polls wait on it.
	Changed <-chan struct{}
}

// Read returns up to max durable records of the stream from offset from.
// Records still in memory come from the tail; older ones from committed data
// objects, without taking any lock an append needs.
func (h Handle) Read(ctx context.Context, from uint64, max int) (ReadResult, error) {
	e, s, id := h.e, h.s, h.s.id
	if err := h.AwaitSettled(ctx); err != nil {
		return ReadResult{}, err
	}
	if err := s.err(); err != nil {
		return ReadResult{}, err
	}
	v := e.cfg.Plane.View()
	if st, ok := v.Stream(id); ok && from < v.ReadStart(st) {
		from = v.ReadStart(st) // trimmed: resume at the first record kept
	}
	for {
		recs, at, ok := s.read(from, max)
		if ok {
			return at.result(recs, from), nil
		}
		// Below the tail in memory: read a data object, then go on in memory
		// if the page reaches it. base only grows, so this ends.
		s.mu.Lock()
		base := s.base
		s.mu.Unlock()
		v = e.cfg.Plane.View() // covers every record below base
		if st, ok := v.Stream(id); ok && from < v.ReadStart(st) {
			from = v.ReadStart(st) // trimmed meanwhile: resume at the first record kept
			continue
		}
		recs, err := e.readCommitted(ctx, &v, id, from, min(max, int(base-from)))
		if err != nil || from+uint64(len(recs)) < base || len(recs) >= max {
			s.mu.Lock()
			at := s.tailViewLocked()
			s.mu.Unlock()
			// A closing append's records may be committed before its seal
			// is recorded: they stay hidden here too.
			if end := from + uint64(len(recs)); end > at.tail {
				recs = recs[:at.tail-min(at.tail, from)]
			}
			return at.result(recs, from), err
		}
		more, at, ok := s.read(base, max-len(recs))
		if ok {
			return at.result(append(recs, more...), from), nil
		}
	}
}

// result is the page of recs from offset from, read at view at.
func (at tailView) result(recs []domain.Record, from uint64) ReadResult {
	return ReadResult{Records: recs, From: from, Confirmed: at.tail, Closed: at.closed, Changed: at.changed}
}

// ReadCommitted reads up to max records from offset from out of committed
// data objects only; any node may serve it, owner or not.
func (e *Engine) ReadCommitted(ctx context.Context, id, from uint64, max int) ([]domain.Record, error) {
	v := e.cfg.Plane.View()
	return e.readCommitted(ctx, &v, id, from, max)
}

// readCommitted reads records from the data object holding offset from.
func (e *Engine) readCommitted(ctx context.Context, v *domain.State, id, from uint64, max int) ([]domain.Record, error) {
	st, ok := v.Stream(id)
	if !ok {
		return nil, ErrNotFound
	}
	if inherits(st, from) {
		// Below a fork point: the source's records, up to the fork point.
		return e.readCommitted(ctx, v, st.ForkOf, from, min(max, int(st.ForkAt-from)))
	}
	if from < st.Start {
		from = st.Start // trimmed away: resume at the first record kept
	}
	obj, ok := v.ObjectAt(st, from)
	if !ok {
		return nil, nil
	}
	f, err := e.blocks.get(ctx, blockKey{obj.ID, id}, func() (domain.Frame, error) {
		f, _, err := e.readSection(ctx, obj.ID, id)
		return f, err
	})
	if err != nil {
		return nil, err
	}
	e.readAhead(v, st, f.End(), 2)
	if from < f.Offset || from >= f.End() {
		return nil, fmt.Errorf("engine: object %d does not hold offset %d of stream %d", obj.ID, from, id)
	}
	recs := f.Records[from-f.Offset:]
	return recs[:min(len(recs), max)], nil
}

// readSection fetches one stream's frame from a data object: the index, then
// only that stream's byte range.
func (e *Engine) readSection(ctx context.Context, objID, stream uint64) (domain.Frame, domain.Section, error) {
	key := domain.DataKey(objID)
	index, err := e.indexes.get(ctx, objID, func() ([]domain.Section, error) { return e.readIndex(ctx, objID) })
	if err != nil {
		return domain.Frame{}, domain.Section{}, err
	}
	sec, ok := index[stream]
	if !ok {
		return domain.Frame{}, domain.Section{}, fmt.Errorf("engine: object %d has no section for stream %d", objID, stream)
	}
	b, err := e.cfg.Store.Get(ctx, key, int64(sec.Offset), int64(sec.Length))
	if err != nil {
		return domain.Frame{}, domain.Section{}, err
	}
	f, _, err := domain.DecodeFrame(b)
	return f, sec, err
}

// readIndex fetches and decodes a data object's index: its first 4 KiB,
// and the rest of the index if it is longer.
func (e *Engine) readIndex(ctx context.Context, objID uint64) ([]domain.Section, error) {
	key := domain.DataKey(objID)
	head, err := e.cfg.Store.Get(ctx, key, 0, 4096)
	if err != nil {
		return nil, err
	}
	n, err := domain.DataIndexLength(head)
	if err != nil {
		return nil, err
	}
	if len(head) < domain.DataHeaderSize+n {
		if head, err = e.cfg.Store.Get(ctx, key, 0, int64(domain.DataHeaderSize+n)); err != nil {
			return nil, err
		}
	}
	secs, err := domain.DecodeDataIndex(head)
	if err != nil {
		return nil, fmt.Errorf("engine: object %d: %w", objID, err)
	}
	return secs, nil
}

// readAhead starts fetching the next sections sections after end, so a
// sequential reader finds them cached when it gets there.
func (e *Engine) readAhead(v *domain.State, st *domain.Stream, end uint64, sections int) {
	for range sections {
		next, ok := v.ObjectAt(st, end)
		if !ok {
			return
		}
		if !e.blocks.has(blockKey{next.ID, st.ID}) {
			go e.blocks.get(context.Background(), blockKey{next.ID, st.ID}, func() (domain.Frame, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				f, _, err := e.readSection(ctx, next.ID, st.ID)
				return f, err
			})
		}
		r := next.RangeOf(st.ID).End
		if r <= end {
			return
		}
		end = r
	}
}

// inherits reports whether offset from of st is read from its fork source:
// below the fork point, unless the fork was trimmed past it.
func inherits(st *domain.Stream, from uint64) bool {
	return st.ForkOf != 0 && from < st.ForkAt && st.Start == st.ForkAt
}

// ReadStart returns the first offset readable from stream id (see
// State.ReadStart); 0 for an unknown stream.
func (e *Engine) ReadStart(id uint64) uint64 {
	v := e.cfg.Plane.View()
	if st, ok := v.Stream(id); ok {
		return v.ReadStart(st)
	}
	return 0
}
