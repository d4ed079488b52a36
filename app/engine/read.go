package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
)

// Read returns up to max durable records of stream id from offset from, the
// confirm offset, and a channel closed when it next grows (for long-polls).
// Records still in memory come from the tail; older ones from committed data
// objects, without taking any lock an append needs.
func (e *Engine) Read(ctx context.Context, id, from uint64, max int) ([]domain.Record, uint64, <-chan struct{}, error) {
	s, ok := e.local(id)
	if !ok {
		return nil, 0, nil, ErrNotLocal
	}
	v := e.cfg.Plane.View()
	if st, ok := v.Stream(id); ok && from < st.Start {
		from = st.Start // trimmed: resume at the first record kept
	}
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	if from < base {
		recs, err := e.readCommitted(ctx, &v, id, from, min(max, int(base-from)))
		s.mu.Lock()
		confirmed, changed := s.confirmed, s.changed
		s.mu.Unlock()
		return recs, confirmed, changed, err
	}
	recs, confirmed, changed := s.read(from, max)
	return recs, confirmed, changed, nil
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
	head, err := e.cfg.Store.Get(ctx, key, 0, 4096)
	if err != nil {
		return domain.Frame{}, domain.Section{}, err
	}
	n, err := domain.DataIndexLength(head)
	if err != nil {
		return domain.Frame{}, domain.Section{}, err
	}
	if len(head) < domain.DataHeaderSize+n {
		if head, err = e.cfg.Store.Get(ctx, key, 0, int64(domain.DataHeaderSize+n)); err != nil {
			return domain.Frame{}, domain.Section{}, err
		}
	}
	secs, err := domain.DecodeDataIndex(head)
	if err != nil {
		return domain.Frame{}, domain.Section{}, fmt.Errorf("engine: object %d: %w", objID, err)
	}
	for _, sec := range secs {
		if sec.Stream != stream {
			continue
		}
		b, err := e.cfg.Store.Get(ctx, key, int64(sec.Offset), int64(sec.Length))
		if err != nil {
			return domain.Frame{}, domain.Section{}, err
		}
		f, _, err := domain.DecodeFrame(b)
		return f, sec, err
	}
	return domain.Frame{}, domain.Section{}, fmt.Errorf("engine: object %d has no section for stream %d", objID, stream)
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
		r := rangeEnd(next, st.ID)
		if r <= end {
			return
		}
		end = r
	}
}

// rangeEnd returns where object o's range of stream ends.
func rangeEnd(o *domain.Object, stream uint64) uint64 {
	for _, r := range o.Ranges {
		if r.Stream == stream {
			return r.End
		}
	}
	return 0
}
